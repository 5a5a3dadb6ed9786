package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestTableFormatConformance: every table format Floe writes ([iceberg],
// [iceberg, delta], [delta]) passes the same checks, each read back by an
// independent reader of that format (iceberg-go's scan for Iceberg, the
// replay of the Delta log in internal/testing/deltaview for Delta, deletes
// and deletion vectors applied): appends land exactly once; a field added
// mid-stream becomes a column and no row is lost; a compaction changes no
// row and leaves fewer live files; an upsert table reads as the latest
// record of each key, tombstones deleting. A crash between the Delta
// version and the Raft entry that records it is proven at the sink
// (sinks/iceberg TestDeltaCommitsSurviveCrashes and its neighbours), where
// the moment can be hit.
func TestTableFormatConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	for _, formats := range [][]string{{config.FormatIceberg}, {config.FormatIceberg, config.FormatDelta}, {config.FormatDelta}} {
		t.Run(strings.Join(formats, ","), func(t *testing.T) {
			t.Parallel()
			f := startFormats(t, formats)
			// Four batches, each committed before the next (so the table
			// has several files to compact); the field x appears in the
			// third.
			want := map[string]int{}
			first := f.readers()[0]
			for b := range 4 {
				f.produce("a", b*50, 50, b >= 2)
				for i := b * 50; i < (b+1)*50; i++ {
					want[fmt.Sprintf("%d/%d", i%2, i/2)] = 1
				}
				wait.Until(t, time.Minute, fmt.Sprintf("batch %d committed", b), func() error {
					if got := first.rows(t, "a"); len(got) != len(want) {
						return fmt.Errorf("%d distinct offsets read, want %d", len(got), len(want))
					}
					return nil
				})
			}
			model := f.produceKeyed("u", 160)
			for _, r := range f.readers() {
				wait.Until(t, time.Minute, r.name+": appends exactly once, with the new column", func() error {
					if got := r.rows(t, "a"); !maps.Equal(got, want) {
						return fmt.Errorf("%d distinct offsets read, want %d", len(got), len(want))
					}
					if !r.hasColumn(t, "a", "x") {
						return fmt.Errorf("no column x")
					}
					return nil
				})
				wait.Until(t, time.Minute, r.name+": the upsert table reads as the latest of each key", func() error {
					if got := r.rows(t, "u"); !maps.Equal(got, model) {
						return fmt.Errorf("%d live rows, want %d", len(got), len(model))
					}
					return nil
				})
			}
			f.compact("a", want)
		})
	}
}

// formatsNode is one node writing table fmt.a (appends) and fmt.u
// (upsert by the Kafka key) in the formats under test.
type formatsNode struct {
	t       *testing.T
	n       *node.Node
	cl      *kgo.Client
	dir     string
	formats []string
}

func startFormats(t *testing.T, formats []string) *formatsNode {
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "a", "u")})
	dir := t.TempDir()
	small := config.Compaction{MinInputFiles: 2, HotMinInputFiles: 2, SmallRatio: 0.5}
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{
		{Topic: "a", Namespace: "fmt", Name: "a", Formats: formats, Compaction: small},
		{Topic: "u", Namespace: "fmt", Name: "u", Formats: formats, Mode: config.ModeUpsert},
	})
	cfg.CommitInterval = config.Duration(200 * time.Millisecond)
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	return &formatsNode{t: t, n: n, cl: cl, dir: dir, formats: formats}
}

// produce writes n records i = from.. to topic, record i to partition i
// mod 2, with the field x when withX.
func (f *formatsNode) produce(topic string, from, n int, withX bool) {
	f.t.Helper()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		v := fmt.Sprintf(`{"i":%d}`, i)
		if withX {
			v = fmt.Sprintf(`{"i":%d,"x":"s%d"}`, i, i)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte(v)})
	}
	if err := f.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
}

// produceKeyed writes n keyed records over 12 keys (key k to partition k
// mod 2), every fifth a tombstone, and returns the "partition/offset" of
// each key's live record: what the upsert table must read as.
func (f *formatsNode) produceKeyed(topic string, n int) map[string]int {
	f.t.Helper()
	latest := map[string]string{} // key -> partition/offset of its live record
	for i := range n {
		k := (i * 7) % 12
		r := &kgo.Record{Topic: topic, Partition: int32(k % 2), Key: []byte(fmt.Sprint("k", k))}
		if i%5 != 4 {
			r.Value = []byte(fmt.Sprintf(`{"v":%d}`, i))
		}
		res := f.cl.ProduceSync(context.Background(), r)
		if err := res.FirstErr(); err != nil {
			f.t.Fatal(err)
		}
		if r.Value == nil {
			delete(latest, string(r.Key))
		} else {
			latest[string(r.Key)] = fmt.Sprintf("%d/%d", r.Partition, res[0].Record.Offset)
		}
	}
	out := map[string]int{}
	for _, po := range latest {
		out[po] = 1
	}
	return out
}

// formatReader reads a table the way one format's readers do.
type formatReader struct {
	name      string
	rows      func(t *testing.T, table string) map[string]int // live rows by "partition/offset"
	hasColumn func(t *testing.T, table, col string) bool
	files     func(t *testing.T, table string) int // live data files
}

// readers are the independent readers of the formats under test.
func (f *formatsNode) readers() []formatReader {
	var out []formatReader
	for _, format := range f.formats {
		switch format {
		case config.FormatIceberg:
			out = append(out, f.icebergReader())
		case config.FormatDelta:
			out = append(out, f.deltaReader())
		}
	}
	return out
}

func (f *formatsNode) icebergReader() formatReader {
	return formatReader{name: "iceberg-go",
		rows: func(t *testing.T, name string) map[string]int {
			tbl, err := f.n.Catalog().LoadTable(context.Background(), []string{"fmt", name})
			if err != nil {
				return nil // not created yet
			}
			counts, _, err := offsetcheck.Counts(context.Background(), tbl)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]int{}
			for tp, offs := range counts {
				_, p, _ := strings.Cut(tp, "/")
				for o, c := range offs {
					out[fmt.Sprintf("%s/%d", p, o)] += c
				}
			}
			return out
		},
		hasColumn: func(t *testing.T, name, col string) bool {
			tbl, err := f.n.Catalog().LoadTable(context.Background(), []string{"fmt", name})
			if err != nil {
				return false
			}
			_, ok := tbl.Schema().FindFieldByName(col)
			return ok
		},
		files: func(t *testing.T, name string) int {
			tbl, err := f.n.Catalog().LoadTable(context.Background(), []string{"fmt", name})
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return len(tasks)
		},
	}
}

func (f *formatsNode) deltaReader() formatReader {
	root := func(name string) string { return filepath.Join(f.dir, "warehouse", "fmt", name) }
	return formatReader{name: "delta log replay",
		rows: func(t *testing.T, name string) map[string]int {
			v := deltaview.Read(t, root(name))
			v.CheckContiguous(t)
			return v.Rows(t, root(name))
		},
		hasColumn: func(t *testing.T, name, col string) bool {
			v := deltaview.Read(t, root(name))
			return len(v.Schemas) > 0 && strings.Contains(v.Schemas[len(v.Schemas)-1], fmt.Sprintf(`"name":%q`, col))
		},
		files: func(t *testing.T, name string) int { return len(deltaview.Read(t, root(name)).Live) },
	}
}

// compact runs table's maintenance with compaction forced, then checks
// that every reader reads the same rows from fewer live files.
func (f *formatsNode) compact(table string, want map[string]int) {
	t := f.t
	t.Helper()
	before := map[string]int{}
	for _, r := range f.readers() {
		before[r.name] = r.files(t, table)
		if before[r.name] < 2 {
			t.Fatalf("%s: %d live files before compaction: the check needs several", r.name, before[r.name])
		}
	}
	if _, err := f.n.Maintain(context.Background(), "fmt."+table, true); err != nil {
		t.Fatalf("maintenance of fmt.%s: %v", table, err)
	}
	for _, r := range f.readers() {
		wait.Until(t, time.Minute, r.name+": the compaction, published", func() error {
			if got := r.rows(t, table); !maps.Equal(got, want) {
				return fmt.Errorf("%d distinct offsets read after compaction, want %d", len(got), len(want))
			}
			if n := r.files(t, table); n >= before[r.name] {
				return fmt.Errorf("%d live files, %d before compaction", n, before[r.name])
			}
			return nil
		})
	}
}
