package ingest

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

func TestInQueueSize(t *testing.T) {
	for _, c := range []struct {
		live int64
		want int
	}{
		{0, maxInQueue}, {1, maxInQueue}, {16, maxInQueue},
		{17, inQueueShared / 17}, {100, inQueueShared / 100},
		{256, inQueueShared / 256}, {1000, inQueueShared / 1000}, {1024, minInQueue}, {5000, minInQueue},
	} {
		if got := inQueueSize(c.live); got != c.want {
			t.Errorf("inQueueSize(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestManyPipelinesShareTheQueueSlots: pipelines made while many live get
// smaller queues, so the node's queue memory stays near inQueueShared slots
// however many tables it writes; a lone table keeps the full queue.
func TestManyPipelinesShareTheQueueSlots(t *testing.T) {
	n := NewNode(Deps{Log: slog.New(slog.DiscardHandler)})
	slots := 0
	for i := range 1000 {
		key := ledger.TableKey([]string{"db", fmt.Sprint("t", i)})
		p := NewPipeline(n, sink.TableSpec{Key: key}, config.Table{}, Start{})
		if i == 0 && cap(p.in) != maxInQueue {
			t.Fatalf("the first table's queue: %d slots, want %d", cap(p.in), maxInQueue)
		}
		slots += cap(p.in)
	}
	// At most maxInQueue each up to 16 tables, then the shared slots
	// (harmonic in the count), then minInQueue each.
	if most := 16*maxInQueue + inQueueShared*5 + 1000*minInQueue; slots > most || slots >= 1000*maxInQueue/4 {
		t.Fatalf("1,000 tables hold %d queue slots, want at most %d", slots, most)
	}
}

// TestPipelinesStartedTogetherShareTheSlots: a worker that starts a
// thousand pipelines in one pass says so, and the first ones get the
// shared size too, not the large queues of a node of few tables.
func TestPipelinesStartedTogetherShareTheSlots(t *testing.T) {
	n := NewNode(Deps{Log: slog.New(slog.DiscardHandler)})
	slots := 0
	for i := range 1000 {
		key := ledger.TableKey([]string{"db", fmt.Sprint("t", i)})
		p := NewPipeline(n, sink.TableSpec{Key: key}, config.Table{}, Start{Tables: 1000})
		slots += cap(p.in)
	}
	if want := 1000 * inQueueSize(1000); slots != want {
		t.Fatalf("1,000 pipelines started together hold %d queue slots, want %d", slots, want)
	}
}

// TestLazyRetry: the pipeline's retry timer is nil (never ready) while
// nothing waits for a retry, and fires once started.
func TestLazyRetry(t *testing.T) {
	r := lazyRetry{t: time.NewTimer(time.Hour)}
	r.t.Stop()
	if r.wait(false) != nil {
		t.Fatal("a retry channel while nothing waits for one")
	}
	c := r.wait(true)
	if c == nil || !r.armed {
		t.Fatal("the retry did not start when wanted")
	}
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatal("the started retry never fired")
	}
	r.armed = false
	if r.wait(false) != nil {
		t.Fatal("a retry channel after the retry, while nothing waits")
	}
}
