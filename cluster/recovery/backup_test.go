package recovery

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

func TestBackupIsTheSnapshotEnvelope(t *testing.T) {
	f := seeded(t)
	var data []byte
	f.Read(func(s *State) {
		var err error
		if data, err = EncodeBackup(s); err != nil {
			t.Fatal(err)
		}
	})
	if snap := snapshotBytes(t, f); !bytes.Equal(data, snap) {
		t.Fatalf("backup differs from the snapshot:\n%s\n%s", data, snap)
	}
	st, err := DecodeSnapshot(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeBackup(st)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatalf("backup changed across decode:\n%s\n%s", data, again)
	}
	if !bytes.HasPrefix(data, []byte(`{"version":1,`)) {
		t.Fatalf("backup does not lead with its version: %.40s", data)
	}
}

func TestBackupRoundTrip(t *testing.T) {
	e := newRecEnv(t)
	e.record(t, "e1", ledger.Range{TopicPartition: recP0, From: 0, To: 10})
	e.mustCommit(t, []string{"e1"}, map[string]int64{"orders/0": 10}, true)
	// Pending, and the first sight of partition 1, which no summary names.
	e.record(t, "e2", ledger.Range{TopicPartition: recP0, From: 10, To: 15}, ledger.Range{TopicPartition: recP1, From: 3, To: 5})
	b := NewBackup(e.n.FSM(), e.wh+"/", iceberg.Properties{}, nil)
	if err := b.WriteOnce(e.ctx); err != nil {
		t.Fatal(err)
	}
	var before *State
	e.n.FSM().Read(func(s *State) {
		data, err := EncodeBackup(s)
		if err != nil {
			t.Fatal(err)
		}
		if before, err = DecodeSnapshot(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	})
	if at, applied, err := b.Last(); err != nil || at.IsZero() || applied != before.Applied {
		t.Fatalf("last backup at %v applied %d (state %d) err %v", at, applied, before.Applied, err)
	}

	st := e.recover(t)
	if !slices.Equal(mapKeys(st.Namespaces), mapKeys(before.Namespaces)) ||
		len(st.Sources) != 1 || *st.Sources["orders"] != *before.Sources["orders"] {
		t.Fatalf("namespaces %v sources %v", mapKeys(st.Namespaces), st.Sources)
	}
	if len(st.Tables) != 2 {
		t.Fatalf("tables %v", mapKeys(st.Tables))
	}
	for key, want := range before.Tables {
		got := st.Tables[key]
		if got == nil || got.MetadataLocation != want.MetadataLocation || got.Rows != want.Rows || got.Commits != want.Commits {
			t.Fatalf("table %s: %+v, want %+v", ledger.DisplayName(key), got, want)
		}
	}
	// e2 was pending: dropped, and the partition resumes at 10.
	wantOffsets(t, st, e.key, recP0, ledger.Offsets{Start: 0, Committed: 10, End: 10})
	wantOffsets(t, st, e.key, recP1, ledger.Offsets{Start: 3, Committed: 3, End: 3})
	if len(st.Ledger.Pending) != 0 || len(st.Nodes) != 0 || len(st.Committers) != 0 || st.Applied != 0 {
		t.Fatalf("pending %v nodes %v committers %v applied %d", st.Ledger.Pending, st.Nodes, st.Committers, st.Applied)
	}
	// Epochs survive without their holders.
	if a := st.Ledger.Assignments["orders/1"]; a != (ledger.Assignment{Epoch: 1}) {
		t.Fatalf("assignment %+v", a)
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestBackupSkipsUnchangedState(t *testing.T) {
	f := seeded(t)
	dir := t.TempDir()
	b := NewBackup(f, "file://"+dir, iceberg.Properties{}, nil)
	ctx := context.Background()
	file := filepath.Join(dir, "_floe", "state", "latest.json")
	if err := b.WriteOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("unchanged state written again (stat %v)", err)
	}
	if err := apply(t, f, 7, RegisterNode{Node: Member{ID: "n2", Addr: "127.0.0.1:2"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, applied, _ := b.Last(); applied != 7 {
		t.Fatalf("last backup applied %d, want 7", applied)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("changed state not written: %v", err)
	}
}

// TestBackupRunWritesUntilTheTermEnds: Run (started by leadership for a
// term, raftnode.Node.RunWhileLeader) writes the backup at its interval and
// returns when its context ends with the term.
func TestBackupRunWritesUntilTheTermEnds(t *testing.T) {
	f := seeded(t)
	dir := t.TempDir()
	b := NewBackup(f, "file://"+dir, iceberg.Properties{}, nil)
	file := filepath.Join(dir, "_floe", "state", "latest.json")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx, 5*time.Millisecond)
	}()
	wait.Until(t, 5*time.Second, "the leader to write a backup", func() error {
		_, err := os.Stat(file)
		return err
	})
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when the term ended")
	}

	// A failing store reports through Last.
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := NewBackup(f, "file://"+blocker, iceberg.Properties{}, nil)
	if err := bad.WriteOnce(context.Background()); err == nil {
		t.Fatal("write below a regular file succeeded")
	}
	if at, _, err := bad.Last(); err == nil || !at.IsZero() {
		t.Fatalf("failed backup reported at %v err %v", at, err)
	}
}

// TestBackupWritesWhatSlippedIn: an entry applied between the state a
// backup wrote and the entry reporting that backup is written at the next
// tick, even when nothing is applied after; a report that follows the
// written state directly needs no new write.
func TestBackupWritesWhatSlippedIn(t *testing.T) {
	f := seeded(t)
	dir := t.TempDir()
	b := NewBackup(f, "file://"+dir, iceberg.Properties{}, nil)
	ctx := context.Background()
	file := filepath.Join(dir, "_floe", "state", "latest.json")
	var base uint64
	f.Read(func(s *State) { base = s.Applied })
	next := base
	report := func(slipIn bool) {
		b.RecordWith(func(_ context.Context, c fsm.BackupWritten) (uint64, error) {
			if slipIn { // a commit lands while the backup is written
				next++
				if err := apply(t, f, next, RegisterNode{Node: Member{ID: fmt.Sprintf("n%d", next), Addr: "127.0.0.1:2"}}); err != nil {
					t.Fatal(err)
				}
			}
			next++
			return next, apply(t, f, next, c)
		})
	}
	report(true)
	if err := b.WriteOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, applied, _ := b.Last(); applied != base {
		t.Fatalf("backup at %d, want %d", applied, base)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	report(false)
	if err := b.WriteOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the entry that slipped in was never written: %v", err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("written again after a report that followed it directly (stat %v)", err)
	}
}
