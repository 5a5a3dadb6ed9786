package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/testnode"
)

// TestTableLayout: the console's table page reads the schema (a field that
// appeared later carries the later schema id and time), the partition
// spec and the mapping from a real table.
func TestTableLayout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "lay")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "lay", Namespace: "ui",
		PartitionBy: []config.PartitionField{{Column: "region", Transform: "identity"}}}})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	testnode.Produce(t, cl, "lay", []string{`{"region":"eu","n":1}`}, 1)
	testnode.WaitRows(t, n, "ui.lay", 1, time.Minute)
	testnode.Produce(t, cl, "lay", []string{`{"region":"us","n":2,"customer":{"tier":"gold"}}`}, 1)
	testnode.WaitRows(t, n, "ui.lay", 2, time.Minute)
	l, err := n.TableLayout(context.Background(), "ui.lay")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, f := range l.Fields {
		byName[f.Name] = i
	}
	region, okR := byName["region"]
	tier, okT := byName["customer.tier"]
	if !okR || !okT {
		t.Fatalf("fields %+v lack region or customer.tier", l.Fields)
	}
	r, ti := l.Fields[region], l.Fields[tier]
	if ti.SinceSchema <= r.SinceSchema || ti.Since.Before(r.Since) || ti.Since.IsZero() || ti.Type != "string" {
		t.Errorf("customer.tier %+v should have appeared after region %+v", ti, r)
	}
	if len(l.Spec) != 1 || l.Spec[0].Source != "region" || l.Spec[0].Transform != "identity" {
		t.Errorf("partition spec %+v", l.Spec)
	}
	if l.Mapping == nil || l.Mapping.Topic != "lay" || l.Namespace != "ui" || l.Name != "lay" || l.CatalogURL == "" || l.CurrentSnapshot == 0 {
		t.Errorf("layout %+v", l)
	}
}

// TestDeadLettersRead: the console's bad records come from the dead-letter
// table itself: the newest first, with their error and their value.
func TestDeadLettersRead(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "bad")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "bad", Namespace: "ui"}})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	testnode.Produce(t, cl, "bad", []string{`{"ok":0}`}, 1)
	testnode.WaitRows(t, n, "ui.bad", 1, time.Minute)
	none, err := n.DeadLetters(context.Background(), "ui.bad", 5)
	if err != nil || len(none) != 0 {
		t.Fatalf("before any dead letter: %v, %v", none, err)
	}
	testnode.Produce(t, cl, "bad", []string{`{"broken":`, `{"ok":2}`, `not json at all`}, 1)
	testnode.WaitRows(t, n, "ui.bad", 4, time.Minute)
	got, err := n.DeadLetters(context.Background(), "ui.bad", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Offset != 3 || got[1].Offset != 1 || got[0].Value != "not json at all" || got[1].Value != `{"broken":` ||
		got[0].Error == "" || got[0].Topic != "bad" || got[0].ValueBytes != 15 {
		t.Fatalf("dead letters %+v, want offsets 3 then 1 with their values and errors", got)
	}
}
