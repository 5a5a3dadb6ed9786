package catalog

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestClockStepsKeepCommitting commits through a catalog whose wall clock
// steps forward ten minutes, back to twenty minutes behind, and back to
// true time. Every commit lands; the snapshot log, metadata log and
// last-updated time stay in order, so the file parses again (iceberg-go
// validates that order on read); and the forward step was not stamped: a
// snapshot ten minutes in the future would make iceberg-go refuse every
// later commit by a correct clock for ten minutes (the test fails so when
// stampClock follows the wall clock). iceberg-go's own clock cannot be
// stepped in-process: the chaos test (clock-jump) steps a whole process.
func TestClockStepsKeepCommitting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := openNode(t, filepath.Join(dir, "node"))
	defer n.Close()
	cat := NewCatalog(n, "file://"+filepath.Join(dir, "wh"), iceberg.Properties{})
	var step time.Duration
	cat.clock = newStampClock(func() time.Time { return time.Now().Add(step) }, time.Now)
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"db", "t"}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	if _, err := cat.CreateTable(ctx, ident, sc); err != nil {
		t.Fatal(err)
	}
	steps := []time.Duration{0, 10 * time.Minute, 10 * time.Minute, -20 * time.Minute, -20 * time.Minute, 0, 0}
	for i, s := range steps {
		step = s
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.AddFiles(ctx, nil, iceberg.Properties{"i": string(rune('0' + i))}, false); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatalf("commit %d with the clock %s off: %v", i, s, err)
		}
	}
	loc, err := cat.MetadataLocation(ident)
	if err != nil {
		t.Fatal(err)
	}
	cat2 := NewCatalog(n, "file://"+filepath.Join(dir, "wh"), iceberg.Properties{}) // no cache: parse the file
	tbl, err := cat2.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("reading %s back: %v", loc, err)
	}
	md := tbl.Metadata()
	var log []int64
	for e := range md.SnapshotLogs() {
		log = append(log, e.TimestampMs)
	}
	if len(log) != len(steps) || !slices.IsSorted(log) {
		t.Fatalf("snapshot log %v: want %d entries in order", log, len(steps))
	}
	if last := log[len(log)-1]; md.LastUpdatedMillis() < last {
		t.Fatalf("last-updated-ms %d before the newest snapshot %d", md.LastUpdatedMillis(), last)
	}
	// The forward step was not followed: no stamp is ahead of true time.
	if ahead := time.UnixMilli(log[len(log)-1]).Sub(time.Now()); ahead > 5*time.Second {
		t.Fatalf("snapshot log %v: stamped %s in the future", log, ahead)
	}
}

// TestStampClock: the stamp follows the wall clock when it is on time or
// behind, holds a forward step back to the stepless estimate, and follows
// a forward step that lasted stepAccept (a correction, not a fault).
func TestStampClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var wallOff, mono time.Duration
	c := newStampClock(func() time.Time { return t0.Add(mono + wallOff) }, func() time.Time { return t0.Add(mono) })
	for _, s := range []struct {
		advance, step time.Duration
		want          time.Duration // the stamp, from t0
	}{
		{time.Second, 0, time.Second},
		{time.Second, 10 * time.Minute, 2 * time.Second},                  // a step forward: held back
		{time.Second, 10 * time.Minute, 3 * time.Second},                  // still held, time runs on
		{time.Second, -5 * time.Minute, 4*time.Second - 5*time.Minute},    // behind: followed (the floor guards order)
		{time.Second, 0, 5 * time.Second},                                 // on time again
		{time.Second, time.Hour, 6 * time.Second},                         // a long step begins
		{stepAccept - time.Second, time.Hour, 5*time.Second + stepAccept}, // ... held for stepAccept
		{time.Second, time.Hour, 6*time.Second + stepAccept + time.Hour},  // ... then followed
		{time.Second, time.Hour, 7*time.Second + stepAccept + time.Hour},  // and kept
	} {
		mono += s.advance
		wallOff = s.step
		if got := c.now().Sub(t0); got != s.want {
			t.Fatalf("after %s with the wall clock %s off: stamp at %s, want %s", mono, s.step, got, s.want)
		}
	}
}

// TestStampSnapshotsKnowsTheUpdate: the stamp lands in iceberg-go's
// add-snapshot update, and an add-snapshot update of a shape the stamping
// does not know (an iceberg-go upgrade) is an error, never a silent skip.
func TestStampSnapshotsKnowsTheUpdate(t *testing.T) {
	md, err := table.NewMetadata(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64, Required: true}),
		iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///tmp/t", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The producer's clock ran ten minutes ahead.
	orig := &table.Snapshot{SnapshotID: 1, TimestampMs: time.Now().Add(10 * time.Minute).UnixMilli()}
	origTS := orig.TimestampMs
	u := table.NewAddSnapshotUpdate(orig)
	for _, c := range []struct {
		now  int64
		want int64
	}{{md.LastUpdatedMillis() + 1000, md.LastUpdatedMillis() + 1000}, {md.LastUpdatedMillis() - 60_000, md.LastUpdatedMillis()}} {
		if _, err := stampSnapshots(md, []table.Update{u}, time.UnixMilli(c.now)); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Snapshot struct {
				TS int64 `json:"timestamp-ms"`
			} `json:"snapshot"`
		}
		if err := json.Unmarshal(js, &got); err != nil || got.Snapshot.TS != c.want {
			t.Fatalf("stamped at %d: update carries %s (%v), want timestamp-ms %d", c.now, js, err, c.want)
		}
	}
	if orig.TimestampMs != origTS {
		t.Fatalf("the producer's snapshot was changed: %d", orig.TimestampMs)
	}
	if _, err := stampSnapshots(md, []table.Update{oddUpdate{}}, time.Now()); err == nil {
		t.Fatal("an add-snapshot update without a Snapshot field was stamped silently")
	}
}

type oddUpdate struct{}

func (oddUpdate) Action() string                                               { return table.UpdateAddSnapshot }
func (oddUpdate) Apply(*table.MetadataBuilder) error                           { return nil }
func (oddUpdate) PostCommit(context.Context, *table.Table, *table.Table) error { return nil }

// TestRestamp: times iceberg-go wrote past the stamp (its clock ran ahead)
// are capped at the stamp, the rest of the metadata is kept, and metadata
// within the slack is returned as it is.
func TestRestamp(t *testing.T) {
	md, err := table.NewMetadata(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64, Required: true}),
		iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///tmp/t", iceberg.Properties{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	lu := md.LastUpdatedMillis()
	if got, err := restamp(md, lu); err != nil || got != md {
		t.Fatalf("on time: %v, rewritten %v", err, got != md)
	}
	ts := lu - 5*time.Minute.Milliseconds()
	got, err := restamp(md, ts)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastUpdatedMillis() != ts || got.Properties()["k"] != "v" || got.TableUUID() != md.TableUUID() {
		t.Fatalf("restamped: last-updated %d (want %d), properties %v, uuid %v", got.LastUpdatedMillis(), ts, got.Properties(), got.TableUUID())
	}
}
