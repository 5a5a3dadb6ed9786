package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// registryConfig is testConfig for tables of registry formats.
func registryConfig(t *testing.T, dir string, brokers []string, reg *registrytest.Registry, tables []config.Table) config.Config {
	t.Helper()
	cfg := testnode.Config(t, dir, brokers, []config.Table{{Topic: "placeholder"}})
	cfg.SchemaRegistry.URL = reg.URL
	cfg.SchemaRegistry.RefreshInterval = config.Duration(time.Second)
	for i := range tables {
		if tables[i].ErrorMode == "" {
			tables[i].ErrorMode = "log"
		}
		tables[i].StartOffset = "earliest"
	}
	cfg.Tables = tables
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// produceRaw writes key/value pairs to one partition in order.
func produceRaw(t *testing.T, cl *kgo.Client, topic string, partition int32, kvs ...[2][]byte) {
	t.Helper()
	var recs []*kgo.Record
	for _, kv := range kvs {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Key: kv[0], Value: kv[1]})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func mustAvro(t *testing.T, reg *registrytest.Registry, id int, schema string, v any) []byte {
	t.Helper()
	b, err := registrytest.Avro(schema, v)
	if err != nil {
		t.Fatalf("encoding %v: %v", v, err)
	}
	return registrytest.Frame(id, nil, b)
}

// tableRows reads a table back with iceberg-go: each row's columns as JSON
// (arrow's own rendering), so tests compare what a reader sees.
func tableRows(t *testing.T, n *node.Node, ident ...string) []map[string]string {
	t.Helper()
	ctx := context.Background()
	tbl, err := n.Catalog().LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for b, err := range batches {
		if err != nil {
			t.Fatal(err)
		}
		for i := range int(b.NumRows()) {
			row := map[string]string{}
			for c, f := range b.Schema().Fields() {
				row[f.Name] = string(mustJSON(t, b.Column(c), i))
			}
			out = append(out, row)
		}
		b.Release()
	}
	return out
}

// tableCells is tableRows by offset, for single-partition topics.
func tableCells(t *testing.T, n *node.Node, ident ...string) map[int64]map[string]string {
	t.Helper()
	out := map[int64]map[string]string{}
	for _, row := range tableRows(t, n, ident...) {
		var off int64
		_ = json.Unmarshal([]byte(row[icebergsink.ColOffset]), &off)
		out[off] = row
	}
	return out
}

func mustJSON(t *testing.T, a arrow.Array, i int) []byte {
	t.Helper()
	if a.IsNull(i) {
		return []byte("null")
	}
	b, err := json.Marshal(a.GetOneForMarshal(i))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitTable polls the status until cond holds for the named table.
func waitTable(t *testing.T, n *node.Node, name, what string, timeout time.Duration, cond func(status.TableReport) bool) status.TableReport {
	t.Helper()
	var tr status.TableReport
	wait.Until(t, timeout, name+": "+what, func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ok bool
		if tr, ok = tableReport(rep, name); !ok || !cond(tr) {
			return fmt.Errorf("%+v", tr)
		}
		return nil
	})
	return tr
}

func fmtCells(row map[string]string, cols ...string) string {
	out := ""
	for _, c := range cols {
		out += fmt.Sprintf("%s=%s ", c, row[c])
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
