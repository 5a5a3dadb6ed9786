package iceberg

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/sinks/delta"
)

// loggedDVFiles names every DV file the table's Delta log mentions, in
// an add (live or not) or a remove, and fails on a DV not in a file.
func (h *upsertHarness) loggedDVFiles() map[string]bool {
	h.t.Helper()
	names, err := filepath.Glob(filepath.Join(h.root(), "_delta_log", "*.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			h.t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var a struct {
				Add    *struct{ DeletionVector *delta.DeletionVector }
				Remove *struct{ DeletionVector *delta.DeletionVector }
			}
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				h.t.Fatal(err)
			}
			for _, d := range []*delta.DeletionVector{dvOf(a.Add), dvOf(a.Remove)} {
				if d == nil {
					continue
				}
				file, err := delta.DVFile(d)
				if err != nil {
					h.t.Fatalf("%s: a DV not in a file: %v", name, err)
				}
				out[file] = true
			}
		}
		f.Close()
	}
	return out
}

func dvOf(a *struct{ DeletionVector *delta.DeletionVector }) *delta.DeletionVector {
	if a == nil {
		return nil
	}
	return a.DeletionVector
}

func (h *upsertHarness) root() string {
	h.t.Helper()
	tbl, err := h.cat.LoadTable(h.ctx, h.spec.Ident)
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimPrefix(tbl.Location(), "file://")
}

// TestUpsertDeltaDVFilesAndOrphans: an upsert table's Delta DVs are in
// DV files at the table root; orphan cleanup keeps every one the log
// still references (live files' DVs and the old DVs of its tombstones)
// and deletes a DV file no version references (as a crash between the
// DV file and its version leaves), and the Delta reader still reads the
// model's rows, before and after a compaction.
func TestUpsertDeltaDVFilesAndOrphans(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	h := newUpsertHarness(t, 2)
	h.withDelta(5)
	for step := range 10 {
		h.randomFlush(rng, step)
		h.commit()
	}
	h.compact()
	for step := range 4 {
		h.randomFlush(rng, 50+step)
		h.commit()
	}
	h.check("before cleanup")
	h.checkDelta("before cleanup")
	logged := h.loggedDVFiles()
	if len(logged) < 2 {
		t.Fatalf("DV files %v: want several after 14 upsert commits", logged)
	}
	stray := "deletion_vector_" + uuid.NewString() + ".bin"
	if err := os.WriteFile(filepath.Join(h.root(), stray), []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	olderThan(t, 10*time.Millisecond, filepath.Join(h.root(), stray)) // its age past the 10 ms minimum before the next commit
	// The table commits on: cleanup counts ages from its last commit.
	h.randomFlush(rng, 60)
	h.commit()
	if _, _, err := h.s.CleanOrphans(h.ctx, h.spec.Key, 10*time.Millisecond, nil, h.a); err != nil {
		t.Fatal(err)
	}
	for f := range logged {
		if _, err := os.Stat(filepath.Join(h.root(), f)); err != nil {
			t.Fatalf("orphan cleanup deleted the DV file %s the log references: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.root(), stray)); !os.IsNotExist(err) {
		t.Fatalf("the unreferenced DV file %s survived orphan cleanup: %v", stray, err)
	}
	h.check("after cleanup")
	h.checkDelta("after cleanup")
	h.randomFlush(rng, 100)
	h.f.Forget(h.spec.Key) // the next commit reads the DVs from their files
	h.commit()
	h.check("after cleanup and a commit")
	h.checkDelta("after cleanup and a commit")
}

// TestUpsertDeltaDVsAfterCrashes: a commit of an upsert table crashes at
// each step between the two logs (after its Delta version, before the
// entry that records it; after the entry, with the key index rolled
// back), and the table is retried, its key index kept or rebuilt: the
// Delta DVs and the Iceberg position deletes give the same live key set,
// the model's, after each.
func TestUpsertDeltaDVsAfterCrashes(t *testing.T) {
	for _, rebuild := range []bool{false, true} {
		t.Run(fmt.Sprint("rebuild=", rebuild), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 1))
			h := newUpsertHarness(t, 2)
			h.withDelta(4)
			crash := false
			h.f.published = func(string, int64) error {
				if crash {
					crash = false
					return errCrash
				}
				return nil
			}
			for step := range 9 {
				h.randomFlush(rng, step)
				switch step % 3 {
				case 0: // after the Delta version, before the entry
					crash = true
					if err := h.s.Commit(h.ctx, h.spec.Key, h.queue, h.a, time.Now()); err == nil {
						t.Fatalf("step %d: the commit did not crash", step)
					}
					h.restart(rebuild)
					h.commit()
				case 1: // after the entry, the key index rolled back
					h.commitAndCrash()
					h.restart(rebuild)
				default:
					h.commit()
				}
				h.check(fmt.Sprint("step ", step))
				h.checkDelta(fmt.Sprint("step ", step))
			}
			h.checkDelta("end").CheckContiguous(t)
		})
	}
}
