package iceberg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // the s3 scheme
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/sinks/delta"
	"github.com/floe-io/floe/sinks/sink"
)

// hostileValues are partition values that need escaping in a path, and a
// plain one; nil is a null region.
func hostileValues() []*string {
	s := func(v string) *string { return &v }
	return []*string{
		s("100%"), s("a/b"), s("são paulo"), s("two words"), s("k=v"), s("#hash"), s("why?"),
		s("1+1"), s("🦆 duck"), s(""), nil, s(strings.Repeat("x", 1000)), s(strings.Repeat("é/%", 200)),
		s("plain-value_1.x"),
	}
}

// warehouse is where a test table lives: a local directory or a bucket of
// an in-process S3 server, seen as the objects it holds.
type warehouse struct {
	location string
	props    iceberg.Properties
	backend  *s3mem.Backend // nil on file://
}

func fileWarehouse(t *testing.T) warehouse {
	return warehouse{location: "file://" + filepath.Join(t.TempDir(), "wh"), props: iceberg.Properties{}}
}

func s3Warehouse(t *testing.T) warehouse {
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return warehouse{location: "s3://lake/wh", backend: backend, props: iceberg.Properties{
		icebergio.S3EndpointURL: srv.URL, icebergio.S3Region: "us-east-1",
		icebergio.S3AccessKeyID: "k", icebergio.S3SecretAccessKey: "s",
	}}
}

// read returns the object a recorded path names, taken literally (the
// bytes after file:// or after the bucket), or an error if there is none.
func (w warehouse) read(path string) ([]byte, error) {
	if w.backend == nil {
		rest, ok := strings.CutPrefix(path, "file://")
		if !ok {
			return nil, fmt.Errorf("%s is not a file:// path", path)
		}
		return os.ReadFile(rest)
	}
	key, ok := strings.CutPrefix(path, "s3://lake/")
	if !ok {
		return nil, fmt.Errorf("%s is not in the bucket", path)
	}
	obj, err := w.backend.GetObject("lake", key, nil)
	if err != nil {
		return nil, err
	}
	defer obj.Contents.Close()
	return io.ReadAll(obj.Contents)
}

// pathCase is a sink over a warehouse with a json table partitioned by
// identity(region) that also writes a Delta log.
type pathCase struct {
	t    *testing.T
	ctx  context.Context
	wh   warehouse
	s    *Sink
	cat  *catalog.Catalog
	rn   *raftnode.Node
	spec sink.TableSpec
	a    ledger.Assignment
	next int64
	n    int
	want map[int64]*string // id -> region of every row written
	// delta says whether the table writes a Delta log. Without one orphan
	// cleanup spares nothing by the log's references: only iceberg-go's
	// comparison of the listing with the manifests keeps live files.
	delta bool
}

func newPathCase(t *testing.T, wh warehouse, withDelta bool) *pathCase {
	c := &pathCase{t: t, ctx: context.Background(), wh: wh, want: map[int64]*string{}, delta: withDelta}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c.rn, err = raftnode.Open(raftnode.NodeConfig{ID: "n1", RaftAddr: addr, DataDir: filepath.Join(t.TempDir(), "node"), BootstrapExpect: 1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.rn.Close() })
	wait.For(t, 30*time.Second, "the node to lead", c.rn.IsLeader)
	wait.For(t, 30*time.Second, "the node's registration to apply", c.rn.Registered)
	c.cat = newCatalog(c.rn, wh.location, wh.props)
	c.s = New(c.cat, 64<<20, nil, nil)
	c.s.SetFence(&testFence{n: c.rn})
	writes := &atomic.Bool{}
	writes.Store(withDelta)
	setFollower(c.s, testDeltaTables{n: c.rn, writes: writes}, wh.props, delta.Options{})
	c.spec = sink.TableSpec{Key: ledger.TableKey([]string{"db", "regions"}), Ident: []string{"db", "regions"}, Format: "json",
		PartitionBy: []config.PartitionField{{Column: "region", Transform: "identity"}}}
	c.a = committer(t, c.rn, c.spec.Key)
	tp := ledger.TopicPartition{Topic: "t"}
	if _, err := c.rn.Apply(c.ctx, fsm.Assign{Partitions: []fsm.PartitionAssignment{{TopicPartition: tp, Assignment: c.a}}}); err != nil {
		t.Fatal(err)
	}
	shape := &records.Shape{Kind: records.Struct, Fields: []*records.Field{
		{Name: "id", Shape: &records.Shape{Kind: records.Long}},
		{Name: "region", Shape: &records.Shape{Kind: records.String}},
	}}
	if err := c.s.Prepare(c.ctx, c.spec, shape); err != nil {
		t.Fatal(err)
	}
	return c
}

// write records one row per value as one ledger entry and commits it.
func (c *pathCase) write(values []*string) {
	c.t.Helper()
	var recs []*records.Record
	for i, v := range values {
		id := c.next + int64(i)
		row := map[string]any{"id": id, "region": nil}
		if v != nil {
			row["region"] = *v
		}
		c.want[id] = v
		recs = append(recs, &records.Record{Topic: "t", Offset: id, Value: row})
	}
	files, err := c.s.Write(c.ctx, c.spec, uuid.NewString(), recs)
	if err != nil {
		c.t.Fatal(err)
	}
	c.n++
	tp := ledger.TopicPartition{Topic: "t"}
	e := ledger.Entry{ID: fmt.Sprintf("e%d", c.n), Node: "n1", Files: files, Records: int64(len(recs)), WrittenAt: time.Now().UnixMilli(),
		Ranges: []ledger.Range{{TopicPartition: tp, From: c.next, To: c.next + int64(len(recs)), Epoch: 1}}}
	if _, err := c.rn.Apply(c.ctx, fsm.RecordFiles{Table: c.spec.Key, Entry: e}); err != nil {
		c.t.Fatal(err)
	}
	c.next += int64(len(recs))
	var pending []ledger.Entry
	c.rn.FSM().Read(func(s *fsm.State) { pending = append(pending, s.Ledger.Pending[c.spec.Key]...) })
	if err := c.s.Commit(c.ctx, c.spec.Key, pending, c.a, time.Now()); err != nil {
		c.t.Fatal(err)
	}
}

func (c *pathCase) table() *table.Table {
	c.t.Helper()
	tbl, err := c.cat.LoadTable(c.ctx, c.spec.Ident)
	if err != nil {
		c.t.Fatal(err)
	}
	return tbl
}

// check proves every path of both logs names the object written: each
// manifest entry's path is an object whose Parquet holds the entry's rows,
// all with its partition value; iceberg-go's scan returns every row with
// its region; every live Delta add, unescaped once and joined with the
// table root, is an object of that partition. It returns the data paths.
func (c *pathCase) check(stage string) []string {
	c.t.Helper()
	tbl := c.table()
	tasks, err := tbl.Scan().PlanFiles(c.ctx)
	if err != nil {
		c.t.Fatalf("%s: planning: %v", stage, err)
	}
	spec := tbl.Spec()
	fieldID := spec.Field(0).FieldID
	var paths []string
	for _, task := range tasks {
		df := task.File
		paths = append(paths, df.FilePath())
		b, err := c.wh.read(df.FilePath())
		if err != nil {
			c.t.Fatalf("%s: the manifest's path %q is no object: %v", stage, df.FilePath(), err)
		}
		part, _ := df.Partition()[fieldID].(string)
		regions := parquetRegions(c.t, b)
		if int64(len(regions)) != df.Count() {
			c.t.Fatalf("%s: %s holds %d rows, the manifest says %d", stage, df.FilePath(), len(regions), df.Count())
		}
		for _, r := range regions {
			if (r == nil) != (df.Partition()[fieldID] == nil) || (r != nil && *r != part) {
				c.t.Fatalf("%s: %s holds region %v under partition %q", stage, df.FilePath(), show(r), part)
			}
		}
	}
	c.checkScan(stage, tbl)
	if c.delta {
		c.checkDelta(stage, tbl.Location())
	}
	return paths
}

// checkScan reads the table with iceberg-go's scan.
func (c *pathCase) checkScan(stage string, tbl *table.Table) {
	c.t.Helper()
	at, err := tbl.Scan().ToArrowTable(c.ctx)
	if err != nil {
		c.t.Fatalf("%s: scanning: %v", stage, err)
	}
	defer at.Release()
	got := map[int64]*string{}
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(fieldIndex(rec.Schema(), "id")).(*array.Int64)
		regs := rec.Column(fieldIndex(rec.Schema(), "region")).(*array.String)
		for i := range int(rec.NumRows()) {
			var r *string
			if regs.IsValid(i) {
				v := regs.Value(i)
				r = &v
			}
			got[ids.Value(i)] = r
		}
	}
	if len(got) != len(c.want) || at.NumRows() != int64(len(c.want)) {
		c.t.Fatalf("%s: the scan read %d rows (%d ids), want %d", stage, at.NumRows(), len(got), len(c.want))
	}
	for id, w := range c.want {
		if g := got[id]; (g == nil) != (w == nil) || (g != nil && *g != *w) {
			c.t.Fatalf("%s: row %d has region %v, want %v", stage, id, show(g), show(w))
		}
	}
}

// checkDelta replays the Delta log's JSON versions and opens every live
// file by its path, unescaped once (PROTOCOL.md: a relative path is a
// percent-encoded URI) and joined with the root.
func (c *pathCase) checkDelta(stage, root string) {
	c.t.Helper()
	live := map[string]map[string]*string{}
	for v := 0; ; v++ {
		b, err := c.wh.read(fmt.Sprintf("%s/_delta_log/%020d.json", root, v))
		if err != nil {
			if v == 0 {
				c.t.Fatalf("%s: no delta log: %v", stage, err)
			}
			break
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var a struct {
				Add *struct {
					Path            string             `json:"path"`
					PartitionValues map[string]*string `json:"partitionValues"`
				} `json:"add"`
				Remove *struct {
					Path string `json:"path"`
				} `json:"remove"`
			}
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				c.t.Fatal(err)
			}
			if a.Add != nil {
				live[a.Add.Path] = a.Add.PartitionValues
			}
			if a.Remove != nil {
				delete(live, a.Remove.Path)
			}
		}
	}
	rows := 0
	for p, pv := range live {
		rel, err := url.PathUnescape(p)
		if err != nil {
			c.t.Fatalf("%s: delta path %q: %v", stage, p, err)
		}
		b, err := c.wh.read(root + "/" + rel)
		if err != nil {
			c.t.Fatalf("%s: the delta path %q is no object: %v", stage, p, err)
		}
		want := pv["region"]
		for _, r := range parquetRegions(c.t, b) {
			if (r == nil) != (want == nil) || (r != nil && *r != *want) {
				c.t.Fatalf("%s: %s holds region %v, its delta partition value is %v", stage, p, show(r), show(want))
			}
			rows++
		}
	}
	if rows != len(c.want) {
		c.t.Fatalf("%s: the delta log's live files hold %d rows, want %d", stage, rows, len(c.want))
	}
}

func parquetRegions(t *testing.T, b []byte) []*string {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	at, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var out []*string
	col := at.Column(fieldIndex(at.Schema(), "region"))
	for _, chunk := range col.Data().Chunks() {
		s := chunk.(*array.String)
		for i := range s.Len() {
			if s.IsNull(i) {
				out = append(out, nil)
				continue
			}
			v := s.Value(i)
			out = append(out, &v)
		}
	}
	return out
}

func fieldIndex(sc *arrow.Schema, name string) int {
	idx := sc.FieldIndices(name)
	if len(idx) != 1 {
		panic("no column " + name)
	}
	return idx[0]
}

func show(s *string) string {
	if s == nil {
		return "null"
	}
	if len(*s) > 40 {
		return fmt.Sprintf("%q... (%d bytes)", (*s)[:40], len(*s))
	}
	return fmt.Sprintf("%q", *s)
}

// TestHostilePartitionValues: a table partitioned by identity on a string
// column, written with values that need escaping (%, /, non-ASCII, space,
// =, #, ?, +, an emoji, empty, null, 1,000-byte values), on a file://
// and an S3 warehouse: the path each manifest entry records is the object
// written, iceberg-go's scan reads every row with its region, every Delta
// add path unescaped once is the object; orphan cleanup with no minimum
// age deletes nothing live, and after a compaction all of this still
// holds with the same rows; with and without a Delta log (whose
// references orphan cleanup also spares). Before the fix the file://
// table's manifests named region=100%25 while the file was region=100%,
// and the 1,000-byte values failed to write on both warehouses.
func TestHostilePartitionValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wh    func(*testing.T) warehouse
		delta bool
	}{
		{"file/iceberg", fileWarehouse, false}, {"file/iceberg+delta", fileWarehouse, true},
		{"s3/iceberg", s3Warehouse, false}, {"s3/iceberg+delta", s3Warehouse, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newPathCase(t, tc.wh(t), tc.delta)
			values := hostileValues()
			c.write(values)
			c.write(values)
			before := c.check("written")
			if _, _, err := c.s.CleanOrphans(c.ctx, c.spec.Key, 0, nil, c.a); err != nil {
				t.Fatal(err)
			}
			c.check("after orphan cleanup")
			rw, err := c.s.PlanRewrite(c.ctx, c.spec.Key, sink.CompactionPolicy{TargetFileSize: 64 << 20, MinInputFiles: 2,
				HotMinInputFiles: 2, MaxBytes: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			if rw.Stats().FilesBefore != len(before) {
				t.Fatalf("compaction rewrites %d of %d files", rw.Stats().FilesBefore, len(before))
			}
			if err := c.s.CommitRewrite(c.ctx, c.spec.Key, rw, c.a, time.Now()); err != nil {
				t.Fatal(err)
			}
			after := c.check("compacted")
			if len(after) != len(values) {
				t.Fatalf("%d files after compaction, want one per partition (%d)", len(after), len(values))
			}
			if _, _, err := c.s.CleanOrphans(c.ctx, c.spec.Key, 0, nil, c.a); err != nil {
				t.Fatal(err)
			}
			c.check("compacted, after orphan cleanup")
		})
	}
}

// TestPlainPartitionPathUnchanged: a value that needs no escaping keeps
// the path iceberg-go always gave it, and one that does keeps the escaped
// path it always had on S3 (Java's URL encoding): only where it lands on
// a file:// warehouse changed, so existing tables see no churn.
func TestPlainPartitionPathUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		wh   func(*testing.T) warehouse
	}{{"file", fileWarehouse}, {"s3", s3Warehouse}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newPathCase(t, tc.wh(t), true)
			plain, pct := "plain-value_1.x", "100%"
			c.write([]*string{&plain, &pct})
			paths := c.check("written")
			sort.Strings(paths)
			loc := c.table().Location()
			wants := []string{loc + "/data/region=100%25/", loc + "/data/region=plain-value_1.x/"}
			for i, p := range paths {
				if !strings.HasPrefix(p, wants[i]) {
					t.Fatalf("path %s, want it under %s", p, wants[i])
				}
			}
		})
	}
}

// TestShortPath: only a partition directory name over maxDirName bytes
// changes; its short form never cuts an escape, stays a valid URI path
// segment, and differs for different long names with the same prefix.
func TestShortPath(t *testing.T) {
	loc := "s3://lake/wh/db/t"
	for _, p := range []string{
		loc + "/data/region=100%25/f.parquet",
		loc + "/data/f.parquet",
		loc + "/data/region=" + strings.Repeat("x", maxDirName-len("region=")) + "/f.parquet",
		"s3://lake/other/data/region=" + strings.Repeat("x", 500) + "/f.parquet",
	} {
		if got := shortPath(loc, p); got != p {
			t.Fatalf("shortPath(%s) = %s, want it unchanged", p, got)
		}
	}
	long := func(v string) string { return loc + "/data/region=" + url.QueryEscape(v) + "/day=1/f.parquet" }
	seen := map[string]bool{}
	for _, v := range []string{strings.Repeat("é", 300), strings.Repeat("é", 301), "a" + strings.Repeat("é", 300), strings.Repeat("x", 1000)} {
		got := shortPath(loc, long(v))
		seg := strings.Split(strings.TrimPrefix(got, loc+"/data/"), "/")
		if len(seg) != 3 || len(seg[0]) > maxDirName || seg[1] != "day=1" || seg[2] != "f.parquet" {
			t.Fatalf("shortPath of a %d-byte value: %s", len(v), got)
		}
		if _, err := url.PathUnescape(seg[0]); err != nil {
			t.Fatalf("%s cuts an escape: %v", seg[0], err)
		}
		if seen[seg[0]] {
			t.Fatalf("two values share %s", seg[0])
		}
		seen[seg[0]] = true
		if shortPath(loc, got) != got {
			t.Fatalf("shortPath is not idempotent on %s", got)
		}
	}
}
