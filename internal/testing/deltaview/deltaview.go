package deltaview

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// View is a Delta table as an independent reader of its JSON log
// sees it: written here from the protocol, not with sinks/delta, so the
// tests do not check the writer with itself. It replays every commit file
// from version 0 (the tests write fewer than checkpoint_interval versions
// per log or keep every JSON file).
type View struct {
	Versions []int64          // every version found, in order
	Txns     []int64          // the txn version of each version that has one, in order
	Live     map[string]bool  // live data files, relative to the root
	DVs      map[string]*DV   // the deletion vector of each live file that has one
	Offsets  map[string]int64 // the newest commitInfo's floe.offsets
	Schemas  []string         // every metaData schemaString, in order
	Changes  []bool           // dataChange of every add and remove, in order
	// Features are the newest protocol's readerFeatures and Configuration
	// the newest metaData's table properties.
	Features      []string
	Configuration map[string]string
}

// Read replays the log under root.
func Read(t testing.TB, root string) View {
	t.Helper()
	v := View{Live: map[string]bool{}, DVs: map[string]*DV{}}
	eachVersion(t, root, func(name string, version int64, lines [][]byte) {
		v.Versions = append(v.Versions, version)
		for _, line := range lines {
			v.apply(t, name, line)
		}
	})
	return v
}

// eachVersion calls fn with every JSON commit file under root's
// _delta_log, in version order: its name, version and action lines.
func eachVersion(t testing.TB, root string, fn func(name string, version int64, lines [][]byte)) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "_delta_log", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	for _, name := range names {
		var version int64
		if _, err := fmt.Sscanf(filepath.Base(name), "%020d.json", &version); err != nil {
			t.Fatalf("log file %s: %v", name, err)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var lines [][]byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines = append(lines, slices.Clone(sc.Bytes()))
		}
		fn(name, version, lines)
	}
}

// apply replays one action line.
func (v *View) apply(t testing.TB, name string, line []byte) {
	t.Helper()
	var a struct {
		Txn *struct{ Version int64 }
		Add *struct {
			Path           string
			DataChange     bool
			DeletionVector *DV
		}
		Remove *struct {
			Path           string
			DataChange     bool
			DeletionVector *DV
		}
		MetaData *struct {
			SchemaString  string
			Configuration map[string]string
		}
		Protocol *struct {
			ReaderFeatures []string
		}
		CommitInfo *struct {
			Offsets map[string]int64 `json:"floe.offsets"`
		}
	}
	if err := json.Unmarshal(line, &a); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	switch {
	case a.Txn != nil:
		v.Txns = append(v.Txns, a.Txn.Version)
	case a.Add != nil:
		v.Live[a.Add.Path] = true
		v.DVs[a.Add.Path] = a.Add.DeletionVector
		v.Changes = append(v.Changes, a.Add.DataChange)
	case a.Remove != nil:
		// A remove ends the logical file of its path and DV only.
		if v.Live[a.Remove.Path] && v.DVs[a.Remove.Path].uniqueID() == a.Remove.DeletionVector.uniqueID() {
			delete(v.Live, a.Remove.Path)
			delete(v.DVs, a.Remove.Path)
		}
		v.Changes = append(v.Changes, a.Remove.DataChange)
	case a.MetaData != nil:
		v.Schemas = append(v.Schemas, a.MetaData.SchemaString)
		v.Configuration = a.MetaData.Configuration
	case a.Protocol != nil:
		v.Features = a.Protocol.ReaderFeatures
	case a.CommitInfo != nil && a.CommitInfo.Offsets != nil:
		v.Offsets = a.CommitInfo.Offsets
	}
}

// CheckContiguous fails unless the versions are 0..n-1 and the txn
// versions 1..m: no version and no commit sequence skipped or repeated.
func (v View) CheckContiguous(t testing.TB) {
	t.Helper()
	for i, ver := range v.Versions {
		if ver != int64(i) {
			t.Fatalf("delta versions %v: not contiguous from 0", v.Versions)
		}
	}
	for i, seq := range v.Txns {
		if seq != int64(i+1) {
			t.Fatalf("txn versions %v: a commit sequence skipped or published twice", v.Txns)
		}
	}
}

// Rows counts the rows of the live files by "partition/offset" (Floe's
// _kafka_partition and _kafka_offset columns), read with arrow-go's
// Parquet reader; rows a file's deletion vector holds are not counted.
func (v View) Rows(t testing.TB, root string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for rel := range v.Live {
		var deleted map[int64]bool
		if dv := v.DVs[rel]; dv != nil {
			var err error
			if deleted, err = dv.RowsAt(root); err != nil {
				t.Fatalf("deletion vector of %s: %v", rel, err)
			}
		}
		var pos int64
		readLive(t, root, rel, func(tbl arrow.Table, c, i int, key string) {
			if !deleted[pos] {
				out[key]++
			}
			pos++
		})
	}
	return out
}

// readLive reads the live file rel under root with arrow-go's Parquet
// reader and calls row for each row, in file order, with its chunk and
// index in the chunk and its "partition/offset" key.
func readLive(t testing.TB, root, rel string, row func(tbl arrow.Table, c, i int, key string)) {
	t.Helper()
	p, err := url.PathUnescape(rel)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(filepath.Join(root, p), false)
	if err != nil {
		t.Fatalf("reading live file %s: %v", rel, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	parts := tbl.Column(tbl.Schema().FieldIndices("_kafka_partition")[0]).Data().Chunks()
	offs := tbl.Column(tbl.Schema().FieldIndices("_kafka_offset")[0]).Data().Chunks()
	for c := range parts {
		pa, oa := parts[c].(*array.Int32), offs[c].(*array.Int64)
		for i := range pa.Len() {
			row(tbl, c, i, fmt.Sprintf("%d/%d", pa.Value(i), oa.Value(i)))
		}
	}
}

// deltaRSScript prints the row count, the distinct (partition, offset)
// pairs and the version delta-rs reads. It queries through DataFusion
// (QueryBuilder), which applies deletion vectors: deltalake 1.6.6's
// to_pyarrow_table refuses a table with the deletionVectors reader feature.
const deltaRSScript = `
import json, os, sys
from deltalake import DeltaTable, QueryBuilder
dt = DeltaTable(sys.argv[1])
t = QueryBuilder().register("t", dt).execute("select _kafka_partition, _kafka_offset from t").read_all()
pairs = set(zip(t.column(0).to_pylist(), t.column(1).to_pylist()))
print(json.dumps({"rows": t.num_rows, "distinct": len(pairs), "version": dt.version()}), flush=True)
os._exit(0)  # delta-rs' runtime threads can abort the interpreter's exit
`

// ReadWithDeltaRS has delta-rs read the table when FLOE_DELTA_PYTHON names
// a Python with deltalake: its rows, distinct (partition, offset) pairs and
// version; ok is false without one.
func ReadWithDeltaRS(t testing.TB, root string) (rows, distinct, version int64, ok bool) {
	t.Helper()
	py := os.Getenv("FLOE_DELTA_PYTHON")
	if py == "" {
		t.Log("FLOE_DELTA_PYTHON is not set: the Delta log is read by the Go replay only")
		return 0, 0, 0, false
	}
	out, err := exec.Command(py, "-c", deltaRSScript, root).CombinedOutput()
	if err != nil {
		t.Fatalf("delta-rs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res struct{ Rows, Distinct, Version int64 }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("delta-rs output %s: %v", out, err)
	}
	return res.Rows, res.Distinct, res.Version, true
}
