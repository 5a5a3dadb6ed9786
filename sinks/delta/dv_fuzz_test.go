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
