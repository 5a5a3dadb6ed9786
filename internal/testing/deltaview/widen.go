package deltaview

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Longs reads the top-level long column col of the live files by
// "partition/offset", as a reader of the typeWidening feature does: a
// file written before the column was widened holds 32-bit integers, which
// it reads as longs only when the newest schema records that change in the
// column's delta.typeChanges ("Type Widening" in the protocol).
func (v View) Longs(t testing.TB, root, col string) map[string]int64 {
	t.Helper()
	widened := v.widenedFromInteger(t, col)
	out := map[string]int64{}
	for rel := range v.Live {
		readLive(t, root, rel, func(tbl arrow.Table, c, i int, key string) {
			switch x := tbl.Column(tbl.Schema().FieldIndices(col)[0]).Data().Chunk(c).(type) {
			case *array.Int64:
				out[key] = x.Value(i)
			case *array.Int32:
				if !widened {
					t.Fatalf("file %s holds %s as int32, and the schema records no widening from integer", rel, col)
				}
				out[key] = int64(x.Value(i))
			default:
				t.Fatalf("file %s holds %s as %s", rel, col, x.DataType())
			}
		})
	}
	return out
}

// widenedFromInteger reports whether the newest schema has col as a long
// whose delta.typeChanges include integer to long.
func (v View) widenedFromInteger(t testing.TB, col string) bool {
	t.Helper()
	if len(v.Schemas) == 0 {
		t.Fatal("the log has no metaData")
	}
	var st struct {
		Fields []struct {
			Name     string
			Type     any
			Metadata map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(v.Schemas[len(v.Schemas)-1]), &st); err != nil {
		t.Fatal(err)
	}
	for _, f := range st.Fields {
		if f.Name != col {
			continue
		}
		if f.Type != "long" {
			t.Fatalf("column %s has type %v, not long", col, f.Type)
		}
		var changes []struct{ FromType, ToType, FieldPath string }
		if raw, ok := f.Metadata["delta.typeChanges"]; ok {
			if err := json.Unmarshal(raw, &changes); err != nil {
				t.Fatalf("delta.typeChanges of %s: %v", col, err)
			}
		}
		for _, c := range changes {
			if c.FromType == "integer" && c.ToType == "long" && c.FieldPath == "" {
				return true
			}
		}
		return false
	}
	t.Fatalf("the schema has no column %s", col)
	return false
}

// deltaRSLongsScript prints delta-rs' values of one column by
// "partition/offset", or the error it reads the table with.
const deltaRSLongsScript = `
import json, os, sys
from deltalake import DeltaTable
try:
    t = DeltaTable(sys.argv[1]).to_pyarrow_table(columns=["_kafka_partition", "_kafka_offset", sys.argv[2]])
    keys = ["%d/%d" % kv for kv in zip(t.column(0).to_pylist(), t.column(1).to_pylist())]
    print(json.dumps({"type": str(t.schema.field(2).type), "values": dict(zip(keys, t.column(2).to_pylist()))}), flush=True)
except Exception as e:
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}), flush=True)
os._exit(0)  # delta-rs' runtime threads can abort the interpreter's exit
`

// LongsWithDeltaRS has delta-rs read column col by "partition/offset"
// when FLOE_DELTA_PYTHON names a Python with deltalake (ok false without
// one): its values and their Arrow type, or refused, the error delta-rs
// read the table with.
func LongsWithDeltaRS(t testing.TB, root, col string) (values map[string]int64, typ, refused string, ok bool) {
	t.Helper()
	py := os.Getenv("FLOE_DELTA_PYTHON")
	if py == "" {
		return nil, "", "", false
	}
	out, err := exec.Command(py, "-c", deltaRSLongsScript, root, col).CombinedOutput()
	if err != nil {
		t.Fatalf("delta-rs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var res struct {
		Type   string
		Values map[string]int64
		Error  string
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("delta-rs output %s: %v", out, err)
	}
	return res.Values, res.Type, res.Error, true
}
