package raftnode

import (
	"bytes"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// bufferSink is a raft.SnapshotSink into memory.
type bufferSink struct{ bytes.Buffer }

func (*bufferSink) ID() string    { return "test" }
func (*bufferSink) Cancel() error { return nil }
func (*bufferSink) Close() error  { return nil }

func applyLog(t *testing.T, a *RaftFSM, index uint64, c fsm.Command) {
	t.Helper()
	data, err := fsm.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if res := a.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: data}).(ApplyResult); res.Err != nil {
		t.Fatal(res.Err)
	}
}

// TestSnapshotPersistsItsMoment: Snapshot only copies the state and Persist
// encodes it later, while Raft applies further entries; what Persist writes
// is the state at Snapshot, not a mix with the later entries.
func TestSnapshotPersistsItsMoment(t *testing.T) {
	f := fsm.New()
	a := NewRaftFSM(f, nil)
	applyLog(t, a, 1, fsm.CreateNamespace{Parts: []string{"db"}, Props: map[string]string{"owner": "a"}})
	st, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := fsm.EncodeSnapshot(st)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	applyLog(t, a, 2, fsm.UpdateNamespace{Parts: []string{"db"}, Updates: map[string]string{"owner": "b"}})
	applyLog(t, a, 3, fsm.CreateNamespace{Parts: []string{"other"}})
	var sink bufferSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	if !bytes.Equal(sink.Bytes(), want) {
		t.Fatalf("persisted\n%s\nwant the state at snapshot\n%s", sink.Bytes(), want)
	}
}
