package delta

import (
	"bytes"
	"testing"
)

// FuzzUnmarshalRowSet fuzzes the deletion vector reader (bytes any writer
// of the table may have put in the log): it never panics, and a set it
// accepts encodes and reads back to the same rows, stably.
func FuzzUnmarshalRowSet(f *testing.F) {
	var r RowSet
	for _, p := range []int64{3, 4, 7, 11, 18, 29, 1 << 32, 1<<32 + 70000} {
		r.Add(p)
	}
	for p := int64(100000); p < 104000; p++ {
		r.Add(p)
	}
	b, err := r.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := UnmarshalRowSet(data)
		if err != nil {
			return
		}
		enc, err := got.MarshalBinary()
		if err != nil {
			t.Fatalf("encoding an accepted set: %v", err)
		}
		again, err := UnmarshalRowSet(enc)
		if err != nil {
			t.Fatalf("reading back an accepted set: %v", err)
		}
		if again.Cardinality() != got.Cardinality() {
			t.Fatalf("%d rows, %d read back", got.Cardinality(), again.Cardinality())
		}
		enc2, _ := again.MarshalBinary()
		if !bytes.Equal(enc, enc2) {
			t.Fatal("encoding not stable")
		}
	})
}

// FuzzZ85Decode fuzzes the Z85 decoder: what it accepts encodes back to
// the same characters.
func FuzzZ85Decode(f *testing.F) {
	f.Add("HelloWorld", 8)
	f.Add(specInline.PathOrInlineDv, 40)
	f.Add("^-aqEH.-t@S}K{vb[*k^", 16)
	f.Fuzz(func(t *testing.T, s string, n int) {
		b, err := z85Decode(s, n)
		if err != nil {
			return
		}
		if len(b) != n || z85Encode(b) != s {
			t.Fatalf("%q (%d bytes) decodes to %x, which encodes to %q", s, n, b, z85Encode(b))
		}
	})
}

// FuzzReadInlineDV fuzzes the inline descriptor's decoder as replay and
// the next commit meet it: any pathOrInlineDv, size and cardinality
// either decode to a set of exactly that cardinality or are refused.
func FuzzReadInlineDV(f *testing.F) {
	var r RowSet
	r.Add(4)
	r.Add(1 << 33)
	dv, err := InlineDV(&r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(dv.PathOrInlineDv, dv.SizeInBytes, dv.Cardinality)
	f.Add(specInline.PathOrInlineDv, specInline.SizeInBytes, specInline.Cardinality)
	f.Fuzz(func(t *testing.T, s string, size int32, card int64) {
		d := &DeletionVector{StorageType: "i", PathOrInlineDv: s, SizeInBytes: size, Cardinality: card}
		got, err := ReadInlineDV(d)
		if err != nil {
			return
		}
		if got.Cardinality() != uint64(card) {
			t.Fatalf("accepted with %d rows, cardinality %d", got.Cardinality(), card)
		}
		again, err := InlineDV(got)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadInlineDV(again); err != nil {
			t.Fatalf("re-encoded DV refused: %v", err)
		}
	})
}

// FuzzDecodeDVFile fuzzes the DV file reader (a file any writer of the
// table may have put beside it) with any descriptor offset, size and
// cardinality: it never panics, and a DV it accepts has exactly that
// cardinality and reads back the same from a file of its own.
func FuzzDecodeDVFile(f *testing.F) {
	var r RowSet
	for _, p := range []int64{3, 4, 7, 1 << 33} {
		r.Add(p)
	}
	b, err := r.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	file, offsets, err := encodeDVFile([][]byte{b, b[:0]})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(file, offsets[0], int32(len(b)), int64(4))
	f.Add(file, int32(1), int32(len(b)), int64(3))
	f.Add([]byte{1, 0, 0, 0, 0}, int32(1), int32(0), int64(0))
	f.Fuzz(func(t *testing.T, file []byte, off, size int32, card int64) {
		got, err := decodeDVFile(file, &off, size, card)
		if err != nil {
			return
		}
		if got.Cardinality() != uint64(card) {
			t.Fatalf("accepted with %d rows, cardinality %d", got.Cardinality(), card)
		}
		enc, err := got.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		again, offs, err := encodeDVFile([][]byte{enc})
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeDVFile(again, &offs[0], int32(len(enc)), card)
		if err != nil || !sameRows(back, got) {
			t.Fatalf("re-encoded DV refused or changed: %v", err)
		}
	})
}
