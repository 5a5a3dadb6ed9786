package worker

import (
	"regexp"
	"slices"
	"testing"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// TestFormatsOfRoutedTables: a table's formats are its mapping's, [iceberg]
// when it names none, none when no mapping routes into it; only a mapping
// that names delta makes its committer write a Delta log.
func TestFormatsOfRoutedTables(t *testing.T) {
	w := &Worker{mapped: map[string]bool{}, routes: map[string]route{
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
		// A dead-letter table takes its table's formats; its Delta log is
		// written by its table's committer, asked about its table (the
		// dead-letter table has no mapping of its own).
		{"db.a_dlq", []string{"iceberg"}, false},
		{"db.b_dlq", []string{"iceberg", "delta"}, false},
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
	w := &Worker{mapped: map[string]bool{}, routes: routes("iceberg", "delta")}
	ch := w.WatchFormats()
	w.setRoutes(routes("iceberg", "delta"), map[string]bool{})
	select {
	case <-ch:
		t.Fatal("routes with the same formats woke the watchers")
	default:
	}
	if !w.PublishedAsIceberg("db.a") || !w.PublishedAsIceberg("db.none") {
		t.Fatal("an [iceberg, delta] table, or one without a mapping, is not served as iceberg")
	}
	w.setRoutes(routes("delta"), map[string]bool{})
	select {
	case <-ch:
	default:
		t.Fatal("[iceberg, delta] turned [delta] did not wake the watchers")
	}
	if w.PublishedAsIceberg("db.a") || w.PublishedAsIceberg("db.a_dlq") {
		t.Fatal("a [delta] table, or its dead-letter table, is served as iceberg")
	}
}

// TestFormatsBeforeDiscovery: before the first discovery (Kafka not listed
// yet) a mapping that names its topic exactly still says its table's
// formats, so a [delta] table is not served as Iceberg meanwhile; a table
// of a regex mapping is not known until discovery.
func TestFormatsBeforeDiscovery(t *testing.T) {
	w := &Worker{
		cfg: Config{Tables: []config.Table{
			{Topic: "d", Namespace: "db", Name: "d", Formats: []string{"delta"}},
			{TopicRegex: "r.*", Namespace: "db", Name: "{topic}", Formats: []string{"delta"}},
		}},
		regexes: []*regexp.Regexp{nil, regexp.MustCompile("^r.*$")},
		state:   newFakeCluster("n1"),
	}
	key := ledger.TableKey([]string{"db", "d"})
	if got := w.Formats(key); !slices.Equal(got, []string{"delta"}) || w.PublishedAsIceberg(key) {
		t.Fatalf("before discovery: formats %v, served as iceberg %v", got, w.PublishedAsIceberg(key))
	}
	if got := w.TableFormats()[key+"_dlq"]; !slices.Equal(got, []string{"delta"}) {
		t.Fatalf("its dead-letter table's formats %v", got)
	}
	if got := w.Formats(ledger.TableKey([]string{"db", "r1"})); got != nil {
		t.Fatalf("a regex mapping's table has formats %v before discovery", got)
	}
}
