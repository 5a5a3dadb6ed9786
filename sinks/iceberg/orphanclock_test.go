package iceberg

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// TestOrphansByStoreClock: this node's clock runs 3 h ahead of the object
// store's (the store stamped the table's last commit 3 h before this
// node's now). A flush's file written a second after that commit, not yet
// recorded, looks 3 h old to iceberg-go and is a candidate; it must stay.
// A file written 2 h before the commit is an orphan by both clocks and
// goes.
func TestOrphansByStoreClock(t *testing.T) {
	ctx := context.Background()
	s, cat, rn := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "clk"}), Ident: []string{"db", "clk"}, Format: "raw"}
	a := committer(t, rn, spec.Key)
	rec := func(off int64) []*records.Record {
		return []*records.Record{{Topic: "t", Partition: 0, Offset: off, Raw: []byte("v")}}
	}
	committed, err := s.Write(ctx, spec, "66666666-6666-4666-8666-666666666666", rec(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := commitForTest(ctx, s, cat, spec, committed, ledger.TopicPartition{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	inFlight, err := s.Write(ctx, spec, "77777777-7777-4777-8777-777777777777", rec(1))
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.Write(ctx, spec, "88888888-8888-4888-8888-888888888888", rec(2))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, spec.Ident)
	if err != nil {
		t.Fatal(err)
	}
	lastCommit := time.Now().Add(-3 * time.Hour) // by the store's clock
	for p, at := range map[string]time.Time{
		tbl.MetadataLocation(): lastCommit,
		inFlight[0].Path:       lastCommit.Add(time.Second),
		old[0].Path:            lastCommit.Add(-2 * time.Hour),
	} {
		if err := os.Chtimes(stripScheme(p), at, at); err != nil {
			t.Fatal(err)
		}
	}
	n, _, err := s.CleanOrphans(ctx, spec.Key, time.Hour, nil, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := osStat(stripScheme(inFlight[0].Path)); err != nil {
		t.Fatalf("a file written after the last commit by the store's clock was deleted (%d deleted): %v", n, err)
	}
	if _, err := osStat(stripScheme(old[0].Path)); !os.IsNotExist(err) || n != 1 {
		t.Fatalf("the old orphan: %d deleted, %v", n, err)
	}
}
