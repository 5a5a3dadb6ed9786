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

// TestMappingModeRoundTrip: the upsert mode and key cross the API (proto
// fields 21 and 22) both ways; an append mapping leaves them empty.
func TestMappingModeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		mode string
		key  []string
	}{
		{"", nil},
		{"upsert", nil},
		{"upsert", []string{"id", "region"}},
	} {
		m, err := mappingFromProto(&adminv1.Mapping{Name: "m", Topic: "t", Mode: tc.mode, Key: tc.key})
		if err != nil {
			t.Fatal(err)
		}
		if m.Table.Mode != tc.mode || !slices.Equal(m.Table.Key, tc.key) {
			t.Fatalf("from proto: mode %q key %v, want %q %v", m.Table.Mode, m.Table.Key, tc.mode, tc.key)
		}
		back := mappingToProto(m)
		if back.GetMode() != tc.mode || !slices.Equal(back.GetKey(), tc.key) {
			t.Fatalf("to proto: mode %q key %v, want %q %v", back.GetMode(), back.GetKey(), tc.mode, tc.key)
		}
	}
}
