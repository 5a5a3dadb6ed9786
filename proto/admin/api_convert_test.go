package admin

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
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

// TestMappingDeltaSettingsRoundTrip: the Delta log settings (fields 23 and
// 24) reach the mapping's table and come back; a retention that is not a
// duration is refused naming the field.
func TestMappingDeltaSettingsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		interval  int32
		retention string
		want      config.DeltaSettings
	}{
		{0, "", config.DeltaSettings{}},
		{25, "48h0m0s", config.DeltaSettings{CheckpointInterval: 25, LogRetention: config.Duration(48 * time.Hour)}},
	} {
		m, err := mappingFromProto(&adminv1.Mapping{Name: "m", Topic: "t", DeltaCheckpointInterval: tc.interval, DeltaLogRetention: tc.retention})
		if err != nil {
			t.Fatal(err)
		}
		if m.Table.Delta != tc.want {
			t.Fatalf("from proto: %+v, want %+v", m.Table.Delta, tc.want)
		}
		back := mappingToProto(m)
		if back.GetDeltaCheckpointInterval() != tc.interval || back.GetDeltaLogRetention() != tc.retention {
			t.Fatalf("to proto: %d %q, want %d %q", back.GetDeltaCheckpointInterval(), back.GetDeltaLogRetention(), tc.interval, tc.retention)
		}
	}
	if _, err := mappingFromProto(&adminv1.Mapping{Name: "m", Topic: "t", DeltaLogRetention: "30d"}); err == nil || !strings.Contains(err.Error(), "mapping.delta_log_retention") {
		t.Fatalf("a retention that is not a Go duration: %v", err)
	}
}
