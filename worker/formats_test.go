package worker

import (
	"slices"
	"testing"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/sinks/sink"
)

// TestFormatsOfRoutedTables: a table's formats are its mapping's, [iceberg]
// when it names none, none when no mapping routes into it; only a mapping
// that names delta makes its committer write a Delta log.
func TestFormatsOfRoutedTables(t *testing.T) {
	w := &Worker{routes: map[string]route{
		"a": {spec: sink.TableSpec{Key: "db.a"}, mapping: config.Table{}},
		"b": {spec: sink.TableSpec{Key: "db.b"}, mapping: config.Table{Formats: []string{"iceberg", "delta"},
			Delta: config.DeltaSettings{CheckpointInterval: 5}}},
	}}
	all := w.TableFormats()
	for _, tc := range []struct {
		table   string
		formats []string
		delta   bool
	}{
		{"db.a", []string{"iceberg"}, false},
		{"db.b", []string{"iceberg", "delta"}, true},
		{"db.c", nil, false},
	} {
		if got := w.Formats(tc.table); !slices.Equal(got, tc.formats) || w.WritesDelta(tc.table) != tc.delta {
			t.Errorf("%s: formats %v, delta %v; want %v, %v", tc.table, got, w.WritesDelta(tc.table), tc.formats, tc.delta)
		}
		if got := all[tc.table]; !slices.Equal(got, tc.formats) {
			t.Errorf("%s: TableFormats %v, want %v", tc.table, got, tc.formats)
		}
		if got := w.DeltaSettings(tc.table).CheckpointInterval; (got == 5) != (tc.table == "db.b") {
			t.Errorf("%s: checkpoint interval %d", tc.table, got)
		}
	}
}

// TestPublishedAsIcebergAndWatchFormats: a [delta] table is not served as
// Iceberg, every other one is (also a table no mapping routes into); new
// routes wake WatchFormats only when they change a table's formats.
func TestPublishedAsIcebergAndWatchFormats(t *testing.T) {
	routes := func(formats ...string) map[string]route {
		return map[string]route{"a": {spec: sink.TableSpec{Key: "db.a"}, mapping: config.Table{Formats: formats}}}
	}
	w := &Worker{routes: routes("iceberg", "delta")}
	ch := w.WatchFormats()
	w.setRoutes(routes("iceberg", "delta"), nil)
	select {
	case <-ch:
		t.Fatal("routes with the same formats woke the watchers")
	default:
	}
	if !w.PublishedAsIceberg("db.a") || !w.PublishedAsIceberg("db.none") {
		t.Fatal("an [iceberg, delta] table, or one without a mapping, is not served as iceberg")
	}
	w.setRoutes(routes("delta"), nil)
	select {
	case <-ch:
	default:
		t.Fatal("[iceberg, delta] turned [delta] did not wake the watchers")
	}
	if w.PublishedAsIceberg("db.a") {
		t.Fatal("a [delta] table is served as iceberg")
	}
}
