package fsm_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// references collects the address of every map, non-empty slice and
// pointer reachable from v, unexported fields included, by path.
func references(path string, v reflect.Value, out map[uintptr]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		out[v.Pointer()] = path
		references(path, v.Elem(), out)
	case reflect.Interface:
		if !v.IsNil() {
			references(path, v.Elem(), out)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		out[v.Pointer()] = path
		for it := v.MapRange(); it.Next(); {
			references(path+"["+fmt.Sprint(it.Key())+"]", it.Value(), out)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return // nothing to alias
		}
		out[v.Pointer()] = path
		for i := range v.Len() {
			references(fmt.Sprintf("%s[%d]", path, i), v.Index(i), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			references(path+"."+v.Type().Field(i).Name, v.Field(i), out)
		}
	}
}

// TestCloneSharesNothing: no map, slice or pointer of the fully populated
// golden state is reachable from its clone, so the FSM may apply entries
// while Persist encodes the clone.
func TestCloneSharesNothing(t *testing.T) {
	orig := goldenState(t)
	// A binary and a JSON-decoded decimal partition value: both are
	// references inside map[int]any.
	orig.Ledger.Pending[goldenTable][0].Files[0].Partition[1003] = []byte{1, 2}
	orig.Ledger.Pending[goldenTable][0].Files[0].Partition[1004] = map[string]any{"Val": map[string]any{}, "Scale": 10.0}
	clone := orig.Clone()
	a, b := map[uintptr]string{}, map[uintptr]string{}
	references("orig", reflect.ValueOf(orig), a)
	references("clone", reflect.ValueOf(clone), b)
	for p, path := range b {
		if other, ok := a[p]; ok {
			t.Errorf("%s shares memory with %s", path, other)
		}
	}
}

// TestCloneKeepsEveryField: the clone encodes to the same bytes, and stays
// so when the original changes after it was taken.
func TestCloneKeepsEveryField(t *testing.T) {
	orig := goldenState(t)
	want, err := fsm.EncodeSnapshot(orig)
	if err != nil {
		t.Fatal(err)
	}
	clone := orig.Clone()
	mutate(orig)
	got, err := fsm.EncodeSnapshot(clone)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("clone encodes as\n%s\nwant\n%s", got, want)
	}
	if after, _ := fsm.EncodeSnapshot(orig); bytes.Equal(after, want) {
		t.Fatal("mutate changed nothing: the test would not see sharing")
	}
}

// mutate changes something inside every map and slice of the golden state.
func mutate(s *fsm.State) {
	s.Namespaces["db"].Parts[0] = "x"
	s.Namespaces["db"].Props["owner"] = "x"
	tb := s.Tables[goldenTable]
	tb.Ident[0], tb.Rows = "x", -1
	tb.Synced["glue"] = fsm.SyncRecord{}
	for _, o := range s.Ledger.Offsets[goldenTable] {
		o.Committed = -1
	}
	f := &s.Ledger.Pending[goldenTable][0].Files[0]
	f.Partition[1001], f.PartValues[1000][0], f.LowerBounds[1][0], f.ColumnSizes[1] = "x", 9, 9, -1
	f.SplitOffsets[0], *f.SortOrderID = -1, -1
	s.Ledger.Pending[goldenTable][0].Ranges[0].To = -1
	s.Ledger.Assignments["orders/2"] = ledger.Assignment{}
	s.Nodes["n1"].Attrs["zone"] = "x"
	s.Sources["orders"].Partitions = -1
	s.Committers[goldenTable] = ledger.Assignment{}
	s.Resumes[goldenTable].Skips["orders/2"] = -1
	s.SchemaRequests[goldenTable][0].Shape[0] = ' '
	s.SchemaRequests[goldenTable][0].Err = "x"
	m := s.Mappings["orders"]
	m.Table.PartitionBy[0].Column, *m.Table.Compaction.Enabled = "x", false
	s.Paused[goldenTable] = -1
	s.Rewinds[goldenTable].From[0].Offset, s.Rewinds[goldenTable].To[0].Offset = -1, -1
	s.LastBackup.Applied = 0
	s.Applied = 0
}

// TestSnapshotIsACopy: the FSM's Snapshot keeps its content while the FSM
// applies further entries.
func TestSnapshotIsACopy(t *testing.T) {
	f := seeded(t)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := fsm.EncodeSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	key := ledger.TableKey([]string{"db", "orders"})
	if err := apply(t, f, 10, fsm.CommitTables{Swaps: []fsm.TableSwap{{Table: key, Expected: "file:///w/db/orders/metadata/00000-a.metadata.json", New: "file:///w/db/orders/metadata/00001-b.metadata.json"}},
		Table: key, Entries: []string{"e1"}, Committer: &ledger.Assignment{Node: "n1", Epoch: 1}, At: 5}); err != nil {
		t.Fatal(err)
	}
	if got, _ := fsm.EncodeSnapshot(snap); !bytes.Equal(got, want) {
		t.Fatalf("snapshot changed with a later entry:\n%s\n%s", got, want)
	}
	if live := snapshotBytes(t, f); bytes.Equal(live, want) {
		t.Fatal("the entry changed nothing: the test would not see sharing")
	}
}
