package admin

import (
	"slices"
	"testing"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// TestMappingFormatsRoundTrip: the API's formats reach the mapping's table
// and come back, so floe ctl and the API show what the table writes.
func TestMappingFormatsRoundTrip(t *testing.T) {
	for _, formats := range [][]string{nil, {"iceberg"}, {"iceberg", "delta"}} {
		m, err := mappingFromProto(&adminv1.Mapping{Name: "m", Topic: "t", Formats: formats})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.Table.Formats, formats) {
			t.Fatalf("from proto: %v, want %v", m.Table.Formats, formats)
		}
		if got := mappingToProto(m).GetFormats(); !slices.Equal(got, formats) {
			t.Fatalf("to proto: %v, want %v", got, formats)
		}
	}
}
