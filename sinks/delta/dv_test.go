package delta

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestZ85Vectors checks Z85 against the vector of its spec (RFC 32) and
// the DV file UUID of the Delta protocol's "JSON Example 1".
func TestZ85Vectors(t *testing.T) {
	hello := []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}
	if got := z85Encode(hello); got != "HelloWorld" {
		t.Fatalf("z85 of the RFC 32 vector: %q", got)
	}
	back, err := z85Decode("HelloWorld", 8)
	if err != nil || !bytes.Equal(back, hello) {
		t.Fatalf("decoding HelloWorld: %x, %v", back, err)
	}
	// pathOrInlineDv "ab^-aqEH.-t@S}K{vb[*k^": prefix "ab", then the UUID.
	uuid, err := z85Decode("^-aqEH.-t@S}K{vb[*k^", 16)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(uuid); got != "d2c639aa8816431aaaf6d3fe2512ff61" {
		t.Fatalf("uuid of JSON Example 1: %s", got)
	}
	if got := z85Encode(uuid); got != "^-aqEH.-t@S}K{vb[*k^" {
		t.Fatalf("encoding the uuid back: %q", got)
	}
}

// TestZ85Padding checks unaligned input: padded with zeros on encoding,
// the padding checked and cut on decoding.
func TestZ85Padding(t *testing.T) {
	for n := range 9 {
		b := bytes.Repeat([]byte{0xA5}, n)
		s := z85Encode(b)
		if len(s) != (n+3)/4*5 {
			t.Fatalf("%d bytes: %d characters", n, len(s))
		}
		back, err := z85Decode(s, n)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("%d bytes: %x, %v", n, back, err)
		}
	}
	if _, err := z85Decode(z85Encode([]byte{1, 2, 3, 4}), 3); err == nil {
		t.Fatal("non-zero padding accepted")
	}
	if _, err := z85Decode("#####", 4); err == nil {
		t.Fatal("a group above 2^32 accepted")
	}
	if _, err := z85Decode("Hello\"orld", 8); err == nil {
		t.Fatal("a character outside Z85 accepted")
	}
}

// specInline is the protocol's "JSON Example 3 — Inline": rows 3, 4, 7,
// 11, 18 and 29 in 40 bytes. Its bytes are Delta's older native layout
// (magic 1681511376 and a bitmap count and size, big endian, before one
// 32-bit roaring bitmap), not the portable one the spec's text describes
// and Floe writes; its 32-bit bitmap is the same in both.
var specInline = DeletionVector{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
	SizeInBytes: 40, Cardinality: 6}

var specRows = []int64{3, 4, 7, 11, 18, 29}

// TestSpecInlineDV checks the DV encoding against the spec's example: its
// 32-bit bitmap, framed as the portable format (magic 1681511377, one
// bucket of key 0), must be exactly what Floe writes for those rows and
// must decode to them; the native framing itself is refused.
func TestSpecInlineDV(t *testing.T) {
	raw, err := z85Decode(specInline.PathOrInlineDv, int(specInline.SizeInBytes))
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(raw) != 1681511376 || binary.BigEndian.Uint32(raw[8:]) != 28 {
		t.Fatalf("the spec's example is not the native layout: % x", raw[:12])
	}
	portable := binary.LittleEndian.AppendUint32(nil, 1681511377)
	portable = binary.LittleEndian.AppendUint64(portable, 1)
	portable = binary.LittleEndian.AppendUint32(portable, 0)
	portable = append(portable, raw[12:]...)
	var mine RowSet
	for _, p := range specRows {
		mine.Add(p)
	}
	enc, err := mine.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, portable) {
		t.Fatalf("encoding of the spec's rows:\n% x\nwant\n% x", enc, portable)
	}
	r, err := UnmarshalRowSet(portable)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int64(64) {
		if r.Contains(p) != slices.Contains(specRows, p) {
			t.Fatalf("row %d: contained %v", p, r.Contains(p))
		}
	}
	if _, err := ReadInlineDV(&specInline); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("native layout: %v", err)
	}
	dv, err := InlineDV(&mine)
	if err != nil {
		t.Fatal(err)
	}
	if dv.SizeInBytes != int32(len(portable)) || dv.Cardinality != 6 || dv.PathOrInlineDv != z85Encode(portable) {
		t.Fatalf("descriptor %+v", dv)
	}
}

// TestRowSetRoundTrip encodes random sets (sparse, dense runs, positions
// past 2^32, so several buckets and all three container kinds) and reads
// them back.
func TestRowSetRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for round := range 50 {
		var r RowSet
		want := map[int64]bool{}
		for range rng.IntN(500) {
			base := int64(rng.IntN(4)) << 32
			start := base + rng.Int64N(200000)
			for p := start; p < start+1+rng.Int64N(int64(1+round*100)); p++ {
				r.Add(p)
				want[p] = true
			}
		}
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalRowSet(b)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if back.Cardinality() != uint64(len(want)) {
			t.Fatalf("round %d: %d rows back, %d in", round, back.Cardinality(), len(want))
		}
		for p := range want {
			if !back.Contains(p) {
				t.Fatalf("round %d: row %d lost", round, p)
			}
		}
		var u RowSet
		u.Union(back)
		u.Union(&r)
		if u.Cardinality() != uint64(len(want)) {
			t.Fatalf("round %d: union of a set with itself has %d rows", round, u.Cardinality())
		}
	}
}

// TestUnmarshalRowSetRefuses checks the reader's own checks.
func TestUnmarshalRowSetRefuses(t *testing.T) {
	var r RowSet
	r.Add(5)
	r.Add(1<<32 + 5)
	good, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	neg := bytes.Clone(good)
	binary.LittleEndian.PutUint32(neg[12:], 1<<31)
	for name, b := range map[string][]byte{
		"trailing":     append(bytes.Clone(good), 0),
		"truncated":    good[:len(good)-1],
		"magic":        append([]byte{0}, good[1:]...),
		"many buckets": append(bytes.Clone(good[:4]), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0),
		"negative key": neg,
	} {
		if _, err := UnmarshalRowSet(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	dv, err := InlineDV(&r)
	if err != nil {
		t.Fatal(err)
	}
	dv.Cardinality++
	if _, err := ReadInlineDV(dv); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("wrong cardinality: %v", err)
	}
}

// TestReplayDVRewrite checks replay of a file whose DV grows: the remove
// of the old logical file (path and old DV) and the add of the new one,
// in either order in the version, leave the file live with the new DV; a
// remove naming another DV leaves it alone.
func TestReplayDVRewrite(t *testing.T) {
	dv := func(rows ...int64) *DeletionVector {
		var r RowSet
		for _, p := range rows {
			r.Add(p)
		}
		d, err := InlineDV(&r)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d1, d2 := dv(1), dv(1, 5)
	for _, addFirst := range []bool{false, true} {
		s := newSnapshot()
		s.apply(0, []Action{{Add: &Add{Path: "a", DeletionVector: d1}}})
		rm, add := Action{Remove: &Remove{Path: "a", DeletionVector: d1}}, Action{Add: &Add{Path: "a", DeletionVector: d2}}
		v := []Action{rm, add}
		if addFirst {
			v = []Action{add, rm}
		}
		s.apply(1, v)
		if f, ok := s.files["a"]; !ok || f.DeletionVector.UniqueID() != d2.UniqueID() {
			t.Fatalf("add first %v: file a %+v", addFirst, f)
		}
		s.apply(2, []Action{{Remove: &Remove{Path: "a", DeletionVector: d1}}})
		if _, ok := s.files["a"]; !ok {
			t.Fatal("a remove of the old DV removed the new logical file")
		}
		s.apply(3, []Action{{Remove: &Remove{Path: "a", DeletionVector: d2}}})
		if _, ok := s.files["a"]; ok {
			t.Fatal("the remove of the live logical file left it")
		}
	}
}
