package fsm_test

import (
	"bytes"
	"testing"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestWatchTable: an entry wakes the watchers of the tables it touches and
// every global watcher, and no one else.
func TestWatchTable(t *testing.T) {
	f := seeded(t)
	orders := ledger.TableKey([]string{"db", "orders"})
	other := ledger.TableKey([]string{"db", "other"})
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}

	all, mine, theirs := f.Watch(), f.WatchTable(orders), f.WatchTable(other)
	if err := apply(t, f, 10, RegisterNode{Node: Member{ID: "n2", Addr: "127.0.0.1:2"}}); err != nil {
		t.Fatal(err)
	}
	if !closed(all) || closed(mine) || closed(theirs) {
		t.Fatalf("membership entry: global %v, orders %v, other %v; want only global", closed(all), closed(mine), closed(theirs))
	}

	all = f.Watch()
	err := apply(t, f, 11, RecordFiles{Table: orders, Entry: ledger.Entry{ID: "e2", Node: "n1", Records: 1,
		Ranges: []ledger.Range{{TopicPartition: tp, From: 10, To: 11, Epoch: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !closed(all) || !closed(mine) || closed(theirs) {
		t.Fatalf("record on orders: global %v, orders %v, other %v; want global and orders", closed(all), closed(mine), closed(theirs))
	}
	if again := f.WatchTable(orders); closed(again) {
		t.Fatal("a new table watch starts closed")
	}

	// An assignment reaches the table through its source.
	mine = f.WatchTable(orders)
	if err := apply(t, f, 12, Assign{Partitions: []PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n2", Epoch: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if !closed(mine) || closed(theirs) {
		t.Fatalf("assign of orders/0: orders %v, other %v; want orders only", closed(mine), closed(theirs))
	}

	// A whole new state wakes every table.
	mine = f.WatchTable(orders)
	if err := f.Restore(bytes.NewReader(snapshotBytes(t, f))); err != nil {
		t.Fatal(err)
	}
	if !closed(mine) || !closed(theirs) {
		t.Fatalf("restore: orders %v, other %v; want both", closed(mine), closed(theirs))
	}
}

// TestCommandTableComplete: every command type up to the newest has a row
// and a name, and unknown types are reported as such.
func TestCommandTableComplete(t *testing.T) {
	for typ := CmdRegisterNode; typ <= CmdRewindTable; typ++ {
		if !Known(typ) || typ.String() == "" || bytes.HasPrefix([]byte(typ.String()), []byte("unknown")) {
			t.Errorf("command %d has no row in the command table", typ)
		}
	}
	if Known(200) || CommandType(200).String() != "unknown(200)" {
		t.Errorf("type 200: known %v, name %s", Known(200), CommandType(200))
	}
}
