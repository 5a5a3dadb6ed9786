package main

import (
	"slices"
	"strings"
	"testing"
)

// TestDemoFormats: floe demo --formats maps the sample topic in the
// formats given, and a format Floe does not write stops the demo with the
// field named before anything starts.
func TestDemoFormats(t *testing.T) {
	for _, c := range []struct {
		formats []string
		err     string
	}{
		{nil, ""},
		{[]string{"iceberg", "delta"}, ""},
		{[]string{"delta"}, ""},
		{[]string{"hudi"}, "tables[0].formats"},
	} {
		cfg, err := demoConfig(t.TempDir(), "orders", []string{"127.0.0.1:9092"}, c.formats)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("formats %v: err %v, want one naming %s", c.formats, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("formats %v: %v", c.formats, err)
		}
		if got := cfg.Tables[0].Formats; len(c.formats) > 0 && !slices.Equal(got, c.formats) {
			t.Fatalf("formats %v: table has %v", c.formats, got)
		}
	}
}
