package catalogsync

import (
	"fmt"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
)

// TestOutages: the first loop to fail probes; others wait for the heal;
// a success wakes them all and ends the outage; a probe that leaves hands
// probing to the next loop that fails.
func TestOutages(t *testing.T) {
	var o outages
	probeA, healedA := o.failed("glue", "a")
	probeB, healedB := o.failed("glue", "b")
	if !probeA || probeB || healedA != healedB {
		t.Fatalf("first failure probes: a %v b %v, one heal channel %v", probeA, probeB, healedA == healedB)
	}
	if p, _ := o.failed("rest", "b"); !p {
		t.Fatal("each catalog has its own probe")
	}
	o.left("glue", "a")
	if p, _ := o.failed("glue", "b"); !p {
		t.Fatal("the probe's loop left: the next failing loop did not take over")
	}
	o.succeeded("glue")
	select {
	case <-healedA:
	default:
		t.Fatal("a success did not wake the waiting loops")
	}
	if p, h := o.failed("glue", "c"); !p || h == healedA {
		t.Fatal("a failure after the heal starts a new outage")
	}
	o.left("glue", "zzz") // not the probe: nothing changes
	if p, _ := o.failed("glue", "d"); p {
		t.Fatal("a loop that was not the probe left and probing moved")
	}
}

// TestCatalogSyncOutageHeals: while a catalog is down, every table backs
// off, but once it is back every table is mirrored again within a
// probe interval or two, not after each table's grown backoff (3.2-6.4 s
// after six failures): the probe finds it back and wakes the others.
func TestCatalogSyncOutageHeals(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out six backoffs")
	}
	st := newSyncState()
	glue := &fakeSyncer{name: "glue"}
	glue.set(true, false)
	cs := startSync(t, st, "n1", 50*time.Millisecond, glue)
	keys := make([]string, 6)
	for i := range keys {
		keys[i] = fmt.Sprintf("db\x1ft%d", i)
		st.assign(keys[i], ledger.Assignment{Node: "n1", Epoch: 1})
		st.commit(keys[i], "m/00001.metadata.json")
	}
	syncEventually(t, "every table failed six times", func() bool {
		for _, k := range keys {
			if cs.Status()[k]["glue"].Failures < 6 {
				return false
			}
		}
		return true
	})
	up := time.Now()
	glue.set(false, false)
	syncEventually(t, "every table mirrored", func() bool {
		for _, k := range keys {
			if st.synced(k, "glue") != "m/00001.metadata.json" {
				return false
			}
		}
		return true
	})
	// A bound, not a benchmark: what the probe guarantees is a try within
	// probeEvery of the return, and the wake is at once; without it the
	// last table would wait at least 3.2 s.
	if took := time.Since(up); took > 3*time.Second {
		t.Fatalf("mirrored again %s after the catalog came back, want within about %s", took.Round(time.Millisecond), probeEvery)
	}
}
