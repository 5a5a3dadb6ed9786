package e2e

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// evolutionSchemas are six compatible versions of one Avro subject: a field
// added, int widened to long, float to double, a decimal's precision grown,
// a field made optional, a field removed.
var evolutionSchemas = []string{
	`{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"n","type":"int"},{"name":"x","type":"float"},
	  {"name":"amt","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"note","type":"string"}]}`,
	`{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"n","type":"int"},{"name":"x","type":"float"},
	  {"name":"amt","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"note","type":"string"},
	  {"name":"added","type":["null","string"],"default":null}]}`,
	`{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"n","type":"long"},{"name":"x","type":"float"},
	  {"name":"amt","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"note","type":"string"},
	  {"name":"added","type":["null","string"],"default":null}]}`,
	`{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"n","type":"long"},{"name":"x","type":"double"},
	  {"name":"amt","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"note","type":"string"},
	  {"name":"added","type":["null","string"],"default":null}]}`,
	`{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"n","type":"long"},{"name":"x","type":"double"},
	  {"name":"amt","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":2}},{"name":"note","type":["null","string"],"default":null},
	  {"name":"added","type":["null","string"],"default":null}]}`,
	`{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"n","type":"long"},{"name":"x","type":"double"},
	  {"name":"amt","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":2}},
	  {"name":"added","type":["null","string"],"default":null}]}`,
}

// incompatibleSchema changes n from long to string.
const incompatibleSchema = `{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"n","type":"string"}]}`

func evolutionRecord(version, i int) map[string]any {
	r := map[string]any{"id": int64(i), "amt": big.NewRat(int64(i)*101, 100)}
	switch {
	case version < 2:
		r["n"] = int32(i)
	default:
		r["n"] = int64(i) << 33
	}
	if version < 3 {
		r["x"] = float32(0.5)
	} else {
		r["x"] = 0.1
	}
	if version < 5 {
		r["note"] = fmt.Sprint("note-", i)
	}
	if version >= 1 {
		r["added"] = fmt.Sprint("v", version+1)
	}
	return r
}

// TestRegistryEvolution: a subject evolves through six compatible versions
// mid-stream and the table follows with stable field ids; a seventh,
// incompatible version pauses only its topic with CONFIG_ISSUE naming the
// field and both types, while another topic of the node goes on; a resume
// after nothing changed pauses again.
func TestRegistryEvolution(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	reg := registrytest.New()
	defer reg.Close()
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "pay"), kfake.SeedTopics(1, "steady")})
	dir := t.TempDir()
	cfg := registryConfig(t, dir, kc.ListenAddrs(), reg, []config.Table{
		{Topic: "pay", Namespace: "evo", Format: "avro"},
		{Topic: "steady", Namespace: "evo", Format: "avro"},
	})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	steadySchema := `{"type":"record","name":"S","fields":[{"name":"i","type":"long"}]}`
	steadyID := reg.Register("steady-value", "AVRO", steadySchema)
	steady := 0
	produceSteady := func(k int) {
		for range k {
			produceRaw(t, cl, "steady", 0, [2][]byte{nil, mustAvro(t, reg, steadyID, steadySchema, map[string]any{"i": int64(steady)})})
			steady++
		}
	}

	const perVersion = 10
	ids := map[string]int{}
	total := 0
	for v, sc := range evolutionSchemas {
		id := reg.Register("pay-value", "AVRO", sc)
		for i := range perVersion {
			produceRaw(t, cl, "pay", int32(i%2), [2][]byte{nil, mustAvro(t, reg, id, sc, evolutionRecord(v, total))})
			total++
		}
		// Mid-stream: let some versions land before the next is produced.
		if v%2 == 1 {
			testnode.WaitRows(t, n, "evo.pay", int64(total), time.Minute)
			tbl, err := n.Catalog().LoadTable(context.Background(), []string{"evo", "pay"})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tbl.Schema().Fields() {
				if old, ok := ids[f.Name]; ok && old != f.ID {
					t.Fatalf("field %s changed id %d -> %d", f.Name, old, f.ID)
				}
				ids[f.Name] = f.ID
			}
		}
		produceSteady(5)
	}
	testnode.WaitRows(t, n, "evo.pay", int64(total), time.Minute)
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"evo", "pay"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range tbl.Schema().Fields() {
		got[f.Name] = f.Type.String()
	}
	for col, want := range map[string]string{"id": "long", "n": "long", "x": "double", "amt": "decimal(18, 2)", "note": "string", "added": "string"} {
		if got[col] != want {
			t.Errorf("column %s is %s, want %s", col, got[col], want)
		}
	}
	cells := tableRows(t, n, "evo", "pay")
	if len(cells) != total {
		t.Fatalf("%d rows, want %d", len(cells), total)
	}
	// Offsets are per partition; check by id instead.
	byID := map[string]map[string]string{}
	for _, row := range cells {
		byID[row["id"]] = row
	}
	for id, want := range map[string]string{
		"0":  `n=0 x=0.5 amt="0" note="note-0" added=null `,
		"15": `n=15 x=0.5 amt="15.15" note="note-15" added="v2" `,
		"25": `n=214748364800 x=0.5 amt="25.25" note="note-25" added="v3" `,
		"45": `n=386547056640 x=0.1 amt="45.45" note="note-45" added="v5" `,
		"55": `n=472446402560 x=0.1 amt="55.55" note=null added="v6" `,
	} {
		if g := fmtCells(byID[id], "n", "x", "amt", "note", "added"); g != want {
			t.Errorf("id %s: %s, want %s", id, g, want)
		}
	}

	// Incompatible: n becomes a string. Only pay pauses.
	badID := reg.Register("pay-value", "AVRO", incompatibleSchema)
	produceRaw(t, cl, "pay", 0, [2][]byte{nil, mustAvro(t, reg, badID, incompatibleSchema, map[string]any{"id": int64(999), "n": "x"})})
	tr := waitTable(t, n, "evo.pay", "CONFIG_ISSUE", time.Minute, func(tr status.TableReport) bool { return tr.State == "CONFIG_ISSUE" })
	wantMsg := fmt.Sprintf("field n: column is long, schema %d has string", badID)
	if !strings.Contains(tr.Reason, wantMsg) || !strings.Contains(tr.Reason, "pay partition 0") {
		t.Fatalf("reason %q does not say %q", tr.Reason, wantMsg)
	}
	produceSteady(5)
	testnode.WaitRows(t, n, "evo.steady", int64(steady), time.Minute)
	if tr, _ := tableReport(mustReport(t, n), "evo.steady"); tr.State != "RUNNING" {
		t.Fatalf("the other topic is %s: %s", tr.State, tr.Reason)
	}
	if tr, _ := tableReport(mustReport(t, n), "evo.pay"); tr.Rows != int64(total) {
		t.Fatalf("paused table has %d rows, want %d", tr.Rows, total)
	}
	// Resuming without fixing anything pauses again at the same record.
	if _, err := admin.ResumeTable(context.Background(), cfg.Node.AdminAddr, "evo.pay", false); err != nil {
		t.Fatal(err)
	}
	waitTable(t, n, "evo.pay", "CONFIG_ISSUE again", time.Minute, func(tr status.TableReport) bool {
		return tr.State == "CONFIG_ISSUE" && strings.Contains(tr.Reason, wantMsg)
	})
}

func mustReport(t *testing.T, n *node.Node) status.Report {
	t.Helper()
	rep, err := n.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRegistryOlderWriterAfterRestart: after a restart (nothing cached), a
// record of an older schema whose int the table widened to long still
// lands: the table records the newest schema id it follows.
func TestRegistryOlderWriterAfterRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	reg := registrytest.New()
	defer reg.Close()
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "old")})
	v1 := `{"type":"record","name":"R","fields":[{"name":"n","type":"int"}]}`
	v2 := `{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`
	id1, id2 := reg.Register("old-value", "AVRO", v1), reg.Register("old-value", "AVRO", v2)
	produceRaw(t, cl, "old", 0,
		[2][]byte{nil, mustAvro(t, reg, id1, v1, map[string]any{"n": int32(1)})},
		[2][]byte{nil, mustAvro(t, reg, id2, v2, map[string]any{"n": int64(1) << 40})})
	dir := t.TempDir()
	cfg := registryConfig(t, dir, kc.ListenAddrs(), reg, []config.Table{{Topic: "old", Namespace: "evo", Format: "avro"}})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	testnode.WaitRows(t, n, "evo.old", 2, time.Minute)
	n.Stop()
	produceRaw(t, cl, "old", 0, [2][]byte{nil, mustAvro(t, reg, id1, v1, map[string]any{"n": int32(3)})})
	n, err = testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	tr := waitTable(t, n, "evo.old", "3 rows", time.Minute, func(tr status.TableReport) bool { return tr.Rows == 3 || tr.State == "CONFIG_ISSUE" })
	if tr.Rows != 3 {
		t.Fatalf("older writer after restart: %s %s", tr.State, tr.Reason)
	}
	if got := tableCells(t, n, "evo", "old")[2]["n"]; got != "3" {
		t.Fatalf("n = %s", got)
	}
}
