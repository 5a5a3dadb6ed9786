package iceberg

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// TestDeadLetterTableOffsetsFollowItsTable: the dead-letter table's
// floe.offsets move with its table's commits even when no dead letter
// arrives, at most DLQOffsetsMaxAge behind: a commit of the table alone
// leaves them while they are recent, and advances them (an empty snapshot
// staged with the table's) once they are older; the maintenance run
// (Expire) brings them level, so a table that goes idle does not keep
// them behind.
func TestDeadLetterTableOffsetsFollowItsTable(t *testing.T) {
	ctx := context.Background()
	s, cat, rn := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "d"}), Ident: []string{"db", "d"}, Format: "raw"}
	a := committer(t, rn, spec.Key)
	tp := ledger.TopicPartition{Topic: "t"}
	if _, err := rn.Apply(ctx, fsm.Assign{Partitions: []fsm.PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n1", Epoch: 1}}}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	steps := []struct {
		name    string
		dlq     bool // the entry carries a dead letter
		at      func() time.Time
		wantDLQ int64 // the dead-letter table's offset of tp after the commit
	}{
		{name: "dead letter", dlq: true, at: time.Now, wantDLQ: 2},
		{name: "table alone, recent dead-letter offsets", at: time.Now, wantDLQ: 2},
		{name: "table alone, dead-letter offsets past the bound", at: func() time.Time { return start.Add(DLQOffsetsMaxAge + time.Second) }, wantDLQ: 6},
		{name: "table alone, just advanced", at: time.Now, wantDLQ: 6},
	}
	dlqOffset := func() int64 {
		tbl, err := cat.LoadTable(ctx, DLQIdent(spec.Ident))
		if err != nil {
			t.Fatal(err)
		}
		offs, err := Offsets(tbl.CurrentSnapshot())
		if err != nil {
			t.Fatal(err)
		}
		return offs[tp.String()]
	}
	for i, st := range steps {
		from := int64(2 * i)
		e := ledger.Entry{ID: fmt.Sprintf("e%d", i), Node: "n1", Ranges: []ledger.Range{{TopicPartition: tp, From: from, To: from + 2, Epoch: 1}}}
		recs := []*records.Record{{Topic: "t", Offset: from, Raw: []byte("v")}, {Topic: "t", Offset: from + 1, Raw: []byte("v")}}
		var err error
		if st.dlq {
			e.Files, err = s.Write(ctx, spec, uuid.NewString(), recs[:1])
			if err == nil {
				e.DLQFiles, err = s.WriteDLQ(ctx, spec, uuid.NewString(), recs[1:])
			}
		} else {
			e.Files, err = s.Write(ctx, spec, uuid.NewString(), recs)
		}
		if err != nil {
			t.Fatalf("%s: writing: %v", st.name, err)
		}
		if _, err := rn.Apply(ctx, fsm.RecordFiles{Table: spec.Key, Entry: e}); err != nil {
			t.Fatalf("%s: recording: %v", st.name, err)
		}
		if err := s.Commit(ctx, spec.Key, []ledger.Entry{e}, a, st.at()); err != nil {
			t.Fatalf("%s: committing: %v", st.name, err)
		}
		for ident, want := range map[string]int64{"table": from + 2, "dead-letter table": st.wantDLQ} {
			id := spec.Ident
			if ident != "table" {
				id = DLQIdent(spec.Ident)
			}
			tbl, err := cat.LoadTable(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			offs, err := Offsets(tbl.CurrentSnapshot())
			if err != nil || offs[tp.String()] != want {
				t.Errorf("%s: the %s's floe.offsets are %v (%v), want %s at %d", st.name, ident, offs, err, tp, want)
			}
		}
	}
	end := int64(2 * len(steps))
	if got := dlqOffset(); got == end {
		t.Fatalf("the dead-letter table is level (%d) before maintenance: the case is not covered", got)
	}
	if _, err := s.Expire(ctx, spec.Key, time.Hour, 0, time.Now(), a); err != nil {
		t.Fatalf("maintenance: %v", err)
	}
	if got := dlqOffset(); got != end {
		t.Fatalf("after maintenance the dead-letter table's offset of %s is %d, want its table's %d", tp, got, end)
	}
}
