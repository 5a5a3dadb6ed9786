package upsert

import (
	"testing"
)

// FuzzKeyIndexValue: a key index value read back from the store (a file
// on the data dir that may be damaged) decodes without panicking, and
// what encodes decodes to itself.
func FuzzKeyIndexValue(f *testing.F) {
	f.Add(encodeRef(rowRef{path: "file:///wh/db/t/data/a.parquet", pos: 7, offset: 42}))
	f.Add([]byte{})
	f.Add(make([]byte, 15))
	f.Fuzz(func(t *testing.T, b []byte) {
		ref, err := decodeRef(b)
		if err != nil {
			return
		}
		if back, err := decodeRef(encodeRef(ref)); err != nil || back != ref {
			t.Fatalf("round trip of %+v: %+v, %v", ref, back, err)
		}
	})
}
