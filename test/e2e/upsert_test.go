package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestUpsertEndToEnd: a seeded random keyed stream (updates and
// tombstones, each key in one partition as the default partitioner puts
// it) through a node, a restart on the same data dir and a restart that
// lost the key index, reads back with iceberg-go's scan as exactly the
// model's latest value per key: by the Kafka key (tombstones delete) and,
// on a copy of the topic, by a payload field (tombstones name no field
// value, so they are ignored).
func TestUpsertEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "u", "f")})
	rng := rand.New(rand.NewPCG(7, 7))
	model := map[string]string{}   // partition|key -> value
	byField := map[string]string{} // partition|id -> value: tombstones name no id, so they are ignored
	send := func(from, n int) {
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			k := rng.IntN(40)
			r := &kgo.Record{Topic: "u", Partition: int32(k % 2), Key: []byte(fmt.Sprint("k", k))}
			id := fmt.Sprintf("%d|k%d", k%2, k)
			if rng.IntN(5) == 0 {
				delete(model, id)
			} else {
				v := fmt.Sprint("v", i)
				r.Value = []byte(fmt.Sprintf(`{"id":"k%d","v":%q}`, k, v))
				model[id], byField[id] = v, v
			}
			f := *r
			f.Topic = "f" // the same record, for the table keyed by a field
			recs = append(recs, r, &f)
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{
		{Topic: "u", Namespace: "e2e", Name: "u", Mode: config.ModeUpsert},
		{Topic: "f", Namespace: "e2e", Name: "by_id", Mode: config.ModeUpsert, Key: []string{"id"}},
	})
	for round, restart := range []string{"first start", "restart", "restart without the key index"} {
		if restart == "restart without the key index" {
			if err := os.Remove(filepath.Join(cfg.Node.DataDir, "upsert-keys.db")); err != nil {
				t.Fatal(err)
			}
		}
		send(round*400, 400)
		n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		wait.Until(t, time.Minute, restart+": the table reads as the model", func() error {
			if err := sameAsModel(n, "u", "_kafka_key", model); err != nil {
				return err
			}
			return sameAsModel(n, "by_id", "id", byField)
		})
		wait.Until(t, 30*time.Second, restart+": the upsert counters", func() error {
			rep, err := n.Report(context.Background())
			if err != nil {
				return err
			}
			tr, _ := tableReport(rep, "e2e.u")
			u := tr.Upsert
			switch {
			case u == nil:
				return fmt.Errorf("no upsert counters")
			case u.Keys != int64(len(model)) || u.DeleteFiles == 0:
				return fmt.Errorf("counters %+v, want %d keys and delete files", *u, len(model))
			case restart == "restart without the key index" && u.IndexRebuilds == 0:
				return fmt.Errorf("counters %+v: no rebuild without the index", *u)
			}
			return nil
		})
		if err := n.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// sameAsModel scans e2e.<name> and compares it with model, keyed by
// partition and keyCol.
func sameAsModel(n *node.Node, name, keyCol string, model map[string]string) error {
	ctx := context.Background()
	tbl, err := n.Catalog().LoadTable(ctx, []string{"e2e", name})
	if err != nil {
		return err
	}
	arr, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		return err
	}
	defer arr.Release()
	got := map[string]string{}
	idx := func(name string) int {
		if i := arr.Schema().FieldIndices(name); len(i) > 0 {
			return i[0]
		}
		return -1
	}
	if idx("v") < 0 {
		return fmt.Errorf("no column v yet")
	}
	for r := array.NewTableReader(arr, 1024); r.Next(); {
		rec := r.RecordBatch()
		part := rec.Column(idx("_kafka_partition")).(*array.Int32)
		key := rec.Column(idx(keyCol))
		val := rec.Column(idx("v")).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			k := key.ValueStr(i)
			if b, ok := key.(*array.Binary); ok {
				k = string(b.Value(i))
			}
			id := fmt.Sprintf("%d|%s", part.Value(i), k)
			if _, dup := got[id]; dup {
				return fmt.Errorf("%s: key %s has two live rows", name, id)
			}
			got[id] = val.Value(i)
		}
	}
	for id, want := range model {
		if got[id] != want {
			return fmt.Errorf("%s: key %s reads %q, want %q", name, id, got[id], want)
		}
	}
	if len(got) != len(model) {
		return fmt.Errorf("%s: %d live rows, want %d", name, len(got), len(model))
	}
	return nil
}
