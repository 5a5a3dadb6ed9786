package deltaview

import (
	"encoding/hex"
	"maps"
	"slices"
	"testing"
)

// TestRoaringArraySpecExample reads the 32-bit bitmap of the protocol's
// inline DV example (rows 3, 4, 7, 11, 18, 29), framed as the portable
// format: magic 1681511377, one bucket, key 0.
func TestRoaringArraySpecExample(t *testing.T) {
	b, err := hex.DecodeString("d1d33964" + "0100000000000000" + "00000000" +
		"3a300000010000000000050010000000030004000700" + "0b0012001d00")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := roaringArray(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(rows)); !slices.Equal(got, []int64{3, 4, 7, 11, 18, 29}) {
		t.Fatalf("rows %v", got)
	}
	if _, err := roaringArray(b[:len(b)-1]); err == nil {
		t.Fatal("a truncated bitmap read")
	}
}
