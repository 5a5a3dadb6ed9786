package delta

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// rowSet is a set of the given positions.
func rowSet(pos ...int64) *RowSet {
	var r RowSet
	for _, p := range pos {
		r.Add(p)
	}
	return &r
}

// marshal serializes r.
func marshal(t *testing.T, r *RowSet) []byte {
	t.Helper()
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDVFileRoundTrip: DVs laid out in one file read back, each at its
// offset (the start of its size field: 1 for the first), with its size,
// CRC and cardinality checked.
func TestDVFileRoundTrip(t *testing.T) {
	big := rowSet()
	for p := int64(0); p < 70000; p += 3 {
		big.Add(p)
	}
	big.Add(1<<33 + 5)
	for name, sets := range map[string][]*RowSet{
		"one":      {rowSet(3, 4, 7, 11, 18, 29)},
		"several":  {rowSet(0), rowSet(1, 2, 3), big, rowSet(1 << 40)},
		"64-bit":   {rowSet(1<<32, 1<<32+1, 5<<32)},
		"same set": {rowSet(9), rowSet(9)},
	} {
		var bitmaps [][]byte
		for _, s := range sets {
			bitmaps = append(bitmaps, marshal(t, s))
		}
		file, offsets, err := encodeDVFile(bitmaps)
		if err != nil {
			t.Fatal(err)
		}
		if file[0] != 1 || offsets[0] != 1 {
			t.Fatalf("%s: version byte %d, first offset %d", name, file[0], offsets[0])
		}
		want := int32(1)
		for i, s := range sets {
			if offsets[i] != want {
				t.Fatalf("%s: DV %d at %d, want %d", name, i, offsets[i], want)
			}
			want += 8 + int32(len(bitmaps[i]))
			got, err := decodeDVFile(file, &offsets[i], int32(len(bitmaps[i])), int64(s.Cardinality()))
			if err != nil {
				t.Fatalf("%s: DV %d: %v", name, i, err)
			}
			if !sameRows(got, s) {
				t.Fatalf("%s: DV %d read back other rows", name, i)
			}
		}
		if int(want) != len(file) {
			t.Fatalf("%s: %d bytes, the DVs end at %d", name, len(file), want)
		}
	}
}

// TestDVFileCorrupt: a DV file that is not what its descriptor says is
// refused with ErrCorruptLog naming the file.
func TestDVFileCorrupt(t *testing.T) {
	ctx := context.Background()
	rows := rowSet(3, 4, 7)
	bm := marshal(t, rows)
	good, offsets, err := encodeDVFile([][]byte{marshal(t, rowSet(1)), bm})
	if err != nil {
		t.Fatal(err)
	}
	off := offsets[1]
	desc := func(mod func(d *DeletionVector)) *DeletionVector {
		o := off
		d := &DeletionVector{StorageType: "u", PathOrInlineDv: z85Encode(make([]byte, 16)), Offset: &o,
			SizeInBytes: int32(len(bm)), Cardinality: 3}
		if mod != nil {
			mod(d)
		}
		return d
	}
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x40; return b }
	for name, tc := range map[string]struct {
		file []byte
		d    *DeletionVector
	}{
		"version":        {flip(0), desc(nil)},
		"crc of data":    {flip(int(off) + 10), desc(nil)},
		"crc itself":     {flip(len(good) - 1), desc(nil)},
		"size field":     {flip(int(off) + 3), desc(nil)},
		"truncated":      {good[:len(good)-2], desc(nil)},
		"empty":          {nil, desc(nil)},
		"offset past":    {good, desc(func(d *DeletionVector) { o := int32(len(good)); d.Offset = &o })},
		"offset zero":    {good, desc(func(d *DeletionVector) { o := int32(0); d.Offset = &o })},
		"wrong size":     {good, desc(func(d *DeletionVector) { d.SizeInBytes-- })},
		"cardinality":    {good, desc(func(d *DeletionVector) { d.Cardinality = 4 })},
		"first DV's":     {good, desc(func(d *DeletionVector) { d.Offset = nil })},
		"short uuid":     {good, desc(func(d *DeletionVector) { d.PathOrInlineDv = "abc" })},
		"prefix escapes": {good, desc(func(d *DeletionVector) { d.PathOrInlineDv = "../" + d.PathOrInlineDv })},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, dvFileName(uuid.UUID{})), tc.file, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadDV(ctx, LocalStore(dir), tc.d)
		if !errors.Is(err, ErrCorruptLog) {
			t.Errorf("%s: %v, want ErrCorruptLog", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "deletion_vector_") && !strings.Contains(err.Error(), "deletion vector path") {
			t.Errorf("%s: %v does not name the file", name, err)
		}
	}
	dir := t.TempDir()
	if _, err := ReadDV(ctx, LocalStore(dir), desc(nil)); !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing DV file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, dvFileName(uuid.UUID{})), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadDV(ctx, LocalStore(dir), desc(nil)); err != nil || !sameRows(got, rows) {
		t.Errorf("the good file: %v", err)
	}
}

// TestDVFilePath: a 'u' descriptor's file is the UUID's canonical form
// under the table root, below its random prefix when it has one (the
// protocol's JSON Example 1).
func TestDVFilePath(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"ab^-aqEH.-t@S}K{vb[*k^", "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"},
		{"^-aqEH.-t@S}K{vb[*k^", "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"},
	} {
		got, err := DVFile(&DeletionVector{StorageType: "u", PathOrInlineDv: tc.path})
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	if _, err := DVFile(&specInline); err == nil {
		t.Error("an inline DV has a file")
	}
}

// dvSize is the size field of the DV at off in a DV file.
func dvSize(file []byte, off int32) int32 { return int32(binary.BigEndian.Uint32(file[off:])) }
