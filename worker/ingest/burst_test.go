package ingest

import (
	"testing"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// TestPublishConsumed: counts wait in the pipeline until publishConsumed,
// which moves them into status once, sets each live partition's fetched
// offset and end, clears its error, and leaves a stopped fetcher's entry
// alone.
func TestPublishConsumed(t *testing.T) {
	tr := status.NewTracker()
	tbl := tr.Table("db.t", "db.t")
	a, b, gone := ledger.TopicPartition{Topic: "t", Partition: 0}, ledger.TopicPartition{Topic: "t", Partition: 1}, ledger.TopicPartition{Topic: "t", Partition: 2}
	tbl.Update(func(ts *status.TableStatus) {
		for _, tp := range []ledger.TopicPartition{a, b, gone} {
			ts.Partitions[tp.String()] = &status.PartitionStatus{Topic: tp.Topic, Partition: tp.Partition}
		}
		ts.Partitions[b.String()].LastError = "i/o timeout"
	})
	pa, pb, pgone := &partState{tp: a, next: 10, hw: 50}, &partState{tp: b, next: 7, hw: 7}, &partState{tp: gone, next: 3}
	p := &Pipeline{parts: map[ledger.TopicPartition]*partState{a: pa, b: pb}, table: func() *status.Table { return tbl }}
	for range 3 {
		p.noteConsumed(pa, 100)
	}
	p.noteConsumed(pb, 5)
	p.noteConsumed(pgone, 1) // its fetcher was stopped before the burst ended
	if got := snapshot(tbl); got.Consumed != 0 || got.Partitions[a.String()].Fetched != 0 {
		t.Fatalf("status moved before publishing: %+v", got)
	}
	if len(p.unpublished.dirty) != 3 {
		t.Fatalf("%d dirty partitions, want 3 (one entry per partition)", len(p.unpublished.dirty))
	}
	p.publishConsumed()
	got := snapshot(tbl)
	if got.Consumed != 5 || got.BytesConsumed != 306 {
		t.Fatalf("consumed %d records / %d bytes, want 5 / 306", got.Consumed, got.BytesConsumed)
	}
	if s := got.Partitions[a.String()]; s.Fetched != 10 || s.HighWatermark != 50 {
		t.Errorf("partition a: fetched %d end %d, want 10 and 50", s.Fetched, s.HighWatermark)
	}
	if s := got.Partitions[b.String()]; s.Fetched != 7 || s.LastError != "" {
		t.Errorf("partition b: fetched %d error %q, want 7 and none", s.Fetched, s.LastError)
	}
	if s := got.Partitions[gone.String()]; s.Fetched != 0 {
		t.Errorf("a stopped fetcher's partition was updated: fetched %d", s.Fetched)
	}
	if pa.statusDirty || pgone.statusDirty || len(p.unpublished.dirty) != 0 || p.unpublished.records != 0 {
		t.Fatalf("pending counts not reset: %+v", p.unpublished)
	}
	p.publishConsumed() // nothing pending: no change
	if again := snapshot(tbl); again.Consumed != 5 {
		t.Fatalf("consumed %d after an empty publish, want 5", again.Consumed)
	}
}

func snapshot(tbl *status.Table) status.TableStatus {
	var out status.TableStatus
	tbl.Update(func(ts *status.TableStatus) {
		out = *ts
		out.Partitions = map[string]*status.PartitionStatus{}
		for k, v := range ts.Partitions {
			c := *v
			out.Partitions[k] = &c
		}
	})
	return out
}
