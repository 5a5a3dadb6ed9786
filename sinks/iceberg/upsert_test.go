package iceberg

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// upsertHarness drives one upsert table through the ledger path: flushes
// written with Write, recorded with RecordFiles, committed with Commit,
// and a model (partition, key) -> latest value built from the records
// alone.
type upsertHarness struct {
	t      *testing.T
	ctx    context.Context
	s      *Sink
	f      *hookedFollower // set by withDelta
	cat    *catalog.Catalog
	apply  func(fsm.Command) error
	rn     *raftnode.Node
	spec   sink.TableSpec
	a      ledger.Assignment
	idx    string // the key index file
	next   map[int32]int64
	model  map[string]string // tp + "|" + key -> value; absent: no live row
	at     map[string]int64  // tp + "|" + key -> the offset of its live row
	queue  []ledger.Entry    // recorded, not committed
	nEntry int
}

func newUpsertHarness(t *testing.T, parts int32) *upsertHarness {
	ctx := context.Background()
	s, cat, rn := newSink(t)
	h := &upsertHarness{t: t, ctx: ctx, s: s, cat: cat, rn: rn, next: map[int32]int64{}, model: map[string]string{}, at: map[string]int64{},
		apply: func(c fsm.Command) error { _, err := rn.Apply(ctx, c); return err },
		spec:  sink.TableSpec{Key: ledger.TableKey([]string{"db", "u"}), Ident: []string{"db", "u"}, Format: "raw", Mode: "upsert"},
		idx:   filepath.Join(t.TempDir(), "keys.db")}
	h.a = committer(t, rn, h.spec.Key)
	var pa []fsm.PartitionAssignment
	for p := range parts {
		pa = append(pa, fsm.PartitionAssignment{TopicPartition: ledger.TopicPartition{Topic: "t", Partition: p}, Assignment: ledger.Assignment{Node: "n1", Epoch: 1}})
	}
	if err := h.apply(fsm.Assign{Partitions: pa}); err != nil {
		t.Fatal(err)
	}
	if err := s.Prepare(ctx, h.spec, nil); err != nil {
		t.Fatal(err)
	}
	h.openIndex()
	t.Cleanup(func() { h.s.Close() })
	return h
}

func (h *upsertHarness) openIndex() {
	h.s.SetKeyIndexPath(h.idx)
	if _, err := h.s.keys.Index(); err != nil { // the test copies the file
		h.t.Fatal(err)
	}
}

// flush writes and records one flush of recs (tombstones have nil Raw).
func (h *upsertHarness) flush(recs []*records.Record) {
	e := ledger.Entry{ID: fmt.Sprintf("e%d", h.nEntry), Node: "n1"}
	h.nEntry++
	from := map[int32]int64{}
	for _, r := range recs {
		if _, ok := from[r.Partition]; !ok {
			from[r.Partition] = h.next[r.Partition]
		}
		r.Topic, r.Offset = "t", h.next[r.Partition]
		h.next[r.Partition]++
		tp := ledger.TopicPartition{Topic: "t", Partition: r.Partition}.String()
		if r.Raw == nil {
			if e.Tombstones == nil {
				e.Tombstones = map[string][]int64{}
			}
			e.Tombstones[tp] = append(e.Tombstones[tp], r.Offset)
			delete(h.model, tp+"|"+string(r.Key))
		} else {
			h.model[tp+"|"+string(r.Key)] = string(r.Raw)
			h.at[tp+"|"+string(r.Key)] = r.Offset
		}
	}
	for p, f := range from {
		e.Ranges = append(e.Ranges, ledger.Range{TopicPartition: ledger.TopicPartition{Topic: "t", Partition: p}, From: f, To: h.next[p], Epoch: 1})
	}
	var err error
	if e.Files, err = h.s.Write(h.ctx, h.spec, uuid.NewString(), recs); err != nil {
		h.t.Fatal(err)
	}
	if err := h.apply(fsm.RecordFiles{Table: h.spec.Key, Entry: e}); err != nil {
		h.t.Fatal(err)
	}
	h.queue = append(h.queue, e)
}

// commit commits the queued entries in one commit.
func (h *upsertHarness) commit() {
	if len(h.queue) == 0 {
		return
	}
	if err := h.s.Commit(h.ctx, h.spec.Key, h.queue, h.a, time.Now()); err != nil {
		h.t.Fatal(err)
	}
	h.queue = nil
}

// restart closes and reopens the index, as a node restart does; lose
// removes it first (the committer role moved to a node without it).
func (h *upsertHarness) restart(lose bool) {
	h.s.Close()
	if lose {
		if err := os.Remove(h.idx); err != nil {
			h.t.Fatal(err)
		}
	}
	h.openIndex()
}

// commitAndCrash commits the queued entries while the index update does
// not survive: the index file is put back as it was before the commit,
// as a crash between the commit and the update leaves it.
func (h *upsertHarness) commitAndCrash() {
	h.s.Close()
	saved := filepath.Join(h.t.TempDir(), "saved.db")
	copyFile(h.t, h.idx, saved)
	h.openIndex()
	h.commit()
	h.s.Close()
	copyFile(h.t, saved, h.idx)
	h.openIndex()
}

func copyFile(t *testing.T, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// check reads the table back with iceberg-go's scan (deletes applied) and
// compares it with the model: exactly one row per live key, its latest
// value, and none for a deleted key.
func (h *upsertHarness) check(step string) {
	tbl, err := h.cat.LoadTable(h.ctx, h.spec.Ident)
	if err != nil {
		h.t.Fatal(err)
	}
	arr, err := tbl.Scan().ToArrowTable(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	defer arr.Release()
	got := map[string]string{}
	col := func(name string) int { return arr.Schema().FieldIndices(name)[0] }
	for r := array.NewTableReader(arr, 1024); r.Next(); {
		rec := r.RecordBatch()
		part := rec.Column(col(ColPartition)).(*array.Int32)
		key := rec.Column(col(ColKey)).(*array.Binary)
		val := rec.Column(col(ColValue)).(*array.Binary)
		for i := 0; i < int(rec.NumRows()); i++ {
			id := ledger.TopicPartition{Topic: "t", Partition: part.Value(i)}.String() + "|" + string(key.Value(i))
			if old, dup := got[id]; dup {
				h.t.Fatalf("%s: key %s has two live rows (%q and %q)", step, id, old, val.Value(i))
			}
			got[id] = string(val.Value(i))
		}
	}
	for id, want := range h.model {
		if got[id] != want {
			h.t.Fatalf("%s: key %s reads %q, want %q", step, id, got[id], want)
		}
	}
	if len(got) != len(h.model) {
		h.t.Fatalf("%s: %d live rows, want %d (deleted keys came back?)", step, len(got), len(h.model))
	}
}

// TestUpsertRandomStream: a seeded random keyed stream of updates and
// tombstones over two partitions, flushed in random sizes, committed one
// or several entries at a time, through index restarts, index losses and
// crashes between a commit and its index update, reads back as exactly
// the model's latest value per key.
func TestUpsertRandomStream(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			h := newUpsertHarness(t, 2)
			for step := range 30 {
				var recs []*records.Record
				for range 1 + rng.IntN(12) {
					k := rng.IntN(15)
					r := &records.Record{Partition: int32(k % 2), Key: []byte(fmt.Sprintf("k%d", k))}
					if rng.IntN(5) > 0 {
						r.Raw = []byte(fmt.Sprintf("v%d-%d", step, rng.IntN(1000)))
					}
					recs = append(recs, r)
				}
				h.flush(recs)
				switch rng.IntN(8) {
				case 0: // keep it pending: the next commit takes two entries
					continue
				case 1:
					h.commitAndCrash()
				case 2:
					h.commit()
					h.restart(rng.IntN(2) == 0)
				default:
					h.commit()
				}
				h.check(fmt.Sprint("step ", step))
			}
			// One more flush and commit: the index is current after it,
			// whatever the last step did to it.
			h.flush([]*records.Record{{Partition: 0, Key: []byte("last"), Raw: []byte("v")}})
			h.commit()
			h.check("end")
			// Delete files are live: orphan cleanup with no safety age
			// leaves them, and the table reads the same.
			if _, _, err := h.s.CleanOrphans(h.ctx, h.spec.Key, 0, nil, h.a); err != nil {
				t.Fatal(err)
			}
			h.check("after orphan cleanup")
			// Compaction applies the deletes: the table reads the same.
			h.compact()
			h.check("after compaction")
			// The key count is kept by commits and rebuilds alike.
			st, ok := h.s.Upsert(h.spec.Key)
			if !ok || st.DeleteFiles == 0 || st.Rebuilds == 0 || st.Keys != int64(len(h.model)) {
				t.Fatalf("stats %+v (%v); want delete files, rebuilds and %d keys", st, ok, len(h.model))
			}
		})
	}
}

// TestUpsertRewindDeleteKeepsDeletesApplied: a replace rewind's delete of
// an upsert table removes the rows at or after the offset without
// bringing back the older rows of their keys (it writes position deletes
// rather than rewriting files), and the next commit rebuilds the index
// from the table it left.
func TestUpsertRewindDeleteKeepsDeletesApplied(t *testing.T) {
	h := newUpsertHarness(t, 1)
	for step := range 6 {
		var recs []*records.Record
		for k := range 4 {
			recs = append(recs, &records.Record{Key: []byte(fmt.Sprint("k", k)), Raw: []byte(fmt.Sprintf("v%d", step))})
		}
		h.flush(recs)
		h.commit()
	}
	const from = 18 // every key's live row (the last flush) and two older rows
	tp := ledger.TopicPartition{Topic: "t"}
	if err := h.apply(fsm.RewindTable{Table: h.spec.Key, To: []fsm.RewindPosition{{TopicPartition: tp, Offset: from}}, Replace: true, At: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.DeleteFrom(h.ctx, h.spec.Key, map[ledger.TopicPartition]int64{tp: from}, 1, h.a, time.Now()); err != nil {
		t.Fatal(err)
	}
	for id, off := range h.at {
		if off >= from {
			delete(h.model, id)
		}
	}
	h.check("after the rewind's delete")
	h.next[0] = from // replayed from the rewind's offset
	h.flush([]*records.Record{{Key: []byte("k1"), Raw: []byte("again")}})
	h.commit()
	h.check("after the replay")
	if st, _ := h.s.Upsert(h.spec.Key); st.Rebuilds < 2 {
		t.Fatalf("the commit after the rewind did not rebuild the index: %+v", st)
	}
}

// TestUpsertAfterAppend: a table written in append mode (a key with
// several rows) switched to upsert keeps, at its first upsert commit, the
// row of the highest offset per key and deletes the others (the rebuild
// finds them).
func TestUpsertAfterAppend(t *testing.T) {
	h := newUpsertHarness(t, 2)
	h.spec.Mode = ""
	if err := h.s.Prepare(h.ctx, h.spec, nil); err != nil {
		t.Fatal(err)
	}
	for step := range 3 {
		var recs []*records.Record
		for k := range 6 {
			recs = append(recs, &records.Record{Partition: int32(k % 2), Key: []byte(fmt.Sprint("k", k)), Raw: []byte(fmt.Sprintf("v%d", step))})
		}
		h.flush(recs)
		h.commit()
	}
	h.spec.Mode = "upsert"
	if err := h.s.Prepare(h.ctx, h.spec, nil); err != nil {
		t.Fatal(err)
	}
	h.flush([]*records.Record{{Partition: 0, Key: []byte("new"), Raw: []byte("n")}})
	h.commit()
	h.check("first upsert commit")
	if st, _ := h.s.Upsert(h.spec.Key); st.DeletedRows != 12 || st.Keys != 7 || st.IndexFileBytes <= 0 {
		t.Fatalf("stats %+v: want the 12 older rows deleted, 7 keys and the index file's size", st)
	}
}

// TestUpsertKeyInTwoPartitions: producers that do not partition by key
// put one key in two partitions; each partition keeps its own latest row
// (docs/upsert.md says so), and a tombstone in one leaves the other's.
func TestUpsertKeyInTwoPartitions(t *testing.T) {
	h := newUpsertHarness(t, 2)
	h.flush([]*records.Record{{Partition: 0, Key: []byte("a"), Raw: []byte("p0")}, {Partition: 1, Key: []byte("a"), Raw: []byte("p1")}})
	h.commit()
	h.check("one row per partition")
	if len(h.model) != 2 {
		t.Fatalf("model %v: the case needs two live rows", h.model)
	}
	h.flush([]*records.Record{{Partition: 1, Key: []byte("a")}})
	h.commit()
	h.check("after a tombstone in partition 1")
}

// TestUpsertDamagedIndex: an index file that is not a valid store is set
// aside and rebuilt from the table; the table stays right.
func TestUpsertDamagedIndex(t *testing.T) {
	h := newUpsertHarness(t, 1)
	h.flush([]*records.Record{{Key: []byte("a"), Raw: []byte("1")}, {Key: []byte("b"), Raw: []byte("1")}})
	h.commit()
	h.s.Close()
	if err := os.WriteFile(h.idx, bytes.Repeat([]byte("not a bbolt file "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	h.openIndex()
	h.flush([]*records.Record{{Key: []byte("a"), Raw: []byte("2")}})
	h.commit()
	h.check("after the damaged index")
	if _, err := os.Stat(h.idx + ".damaged"); err != nil {
		t.Fatalf("the damaged index was not set aside: %v", err)
	}
}
