package delta

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/testing/deltaview"
)

// dvsOf returns the DV of each add of version v, by path.
func dvsOf(t *testing.T, dir string, v int64) map[string]*DeletionVector {
	t.Helper()
	out := map[string]*DeletionVector{}
	for _, a := range readVersion(t, dir, v) {
		if a.Add != nil && a.Add.DeletionVector != nil {
			out[a.Add.Path] = a.Add.DeletionVector
		}
	}
	return out
}

// dvFiles lists the DV files under the table root.
func dvFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, dvFilePrefix+"*"+dvFileSuffix))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}

// independentRows reads a DV with deltaview's reader, written from the
// protocol apart from this package, and returns its rows in order.
func independentRows(t *testing.T, dir string, d *DeletionVector) []int64 {
	t.Helper()
	dv := &deltaview.DV{StorageType: d.StorageType, PathOrInlineDv: d.PathOrInlineDv, Offset: d.Offset,
		SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
	rows, err := dv.RowsAt(dir)
	if err != nil {
		t.Fatalf("deltaview reading %+v: %v", d, err)
	}
	return slices.Sorted(maps.Keys(rows))
}

// TestUpsertLogWritesDVFiles: the DVs of an upsert table's log are in
// files ('u'): one file per version that deletes rows, every DV of the
// version in it at its own offset, the descriptor's size and cardinality
// those of the bitmap, readable by an independent reader; a file whose DV
// grows gets its union in the next version's file, and the old DV's file
// stays referenced through the tombstone.
func TestUpsertLogWritesDVFiles(t *testing.T) {
	ctx := context.Background()
	dir, tbl := dvTable(t)
	l := openLog(t, LocalStore(dir))
	a := dataFile(t, tbl.Location, 0, "eu", 0, 9)
	b := dataFile(t, tbl.Location, 0, "eu", 10, 19)
	if _, err := l.Publish(ctx, appendCommit(tbl, 1, a)); err != nil {
		t.Fatal(err)
	}
	c := appendCommit(tbl, 2, b)
	c.Deletes = map[string][]int64{a.Path: {1, 3}, b.Path: {0, 7, 9}}
	if _, err := l.Publish(ctx, c); err != nil {
		t.Fatal(err)
	}
	c = appendCommit(tbl, 3)
	c.Deletes = map[string][]int64{a.Path: {5}}
	if _, err := l.Publish(ctx, c); err != nil {
		t.Fatal(err)
	}
	rel := func(f File) string { p, _ := relPath(tbl.Location, f.Path); return p }
	want := []map[string][]int64{
		{rel(a): {1, 3}, rel(b): {0, 7, 9}},
		{rel(a): {1, 3, 5}},
	}
	seen := map[string]bool{}
	for i, w := range want {
		dvs := dvsOf(t, dir, int64(i+1))
		if len(dvs) != len(w) {
			t.Fatalf("version %d: DVs of %v, want %v", i+1, slices.Sorted(maps.Keys(dvs)), w)
		}
		var file string
		offsets := map[int32]bool{}
		for p, d := range dvs {
			name, err := DVFile(d)
			if err != nil || d.StorageType != "u" || len(d.PathOrInlineDv) != dvUUIDChars || d.Offset == nil {
				t.Fatalf("version %d, %s: descriptor %+v (%v)", i+1, p, d, err)
			}
			if file != "" && name != file {
				t.Fatalf("version %d: DVs in %s and %s, want one file", i+1, file, name)
			}
			file, offsets[*d.Offset] = name, true
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if dvSize(data, *d.Offset) != d.SizeInBytes || d.Cardinality != int64(len(w[p])) {
				t.Fatalf("version %d, %s: descriptor %+v, size field %d", i+1, p, d, dvSize(data, *d.Offset))
			}
			if got := independentRows(t, dir, d); !slices.Equal(got, w[p]) {
				t.Fatalf("version %d, %s: rows %v, want %v", i+1, p, got, w[p])
			}
		}
		if len(offsets) != len(dvs) || seen[file] {
			t.Fatalf("version %d: offsets %v in %s (files before %v)", i+1, offsets, file, seen)
		}
		seen[file] = true
	}
	files := dvFiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("DV files %v, want one per version that deletes", files)
	}
	ref := openLog(t, LocalStore(dir)).Referenced()
	for _, f := range files {
		if !slices.Contains(ref, f) {
			t.Fatalf("referenced %v leaves out the DV file %s", ref, f)
		}
	}
}

// TestInlineLogExtended: a log whose DVs an older Floe wrote inline keeps
// working: the next commit unions its deletes with the inline DV and
// writes the result to a DV file, the inline DVs it does not touch stay,
// and so through a checkpoint and a reopen.
func TestInlineLogExtended(t *testing.T) {
	ctx := context.Background()
	for _, checkpoint := range []bool{false, true} {
		dir, tbl := dvTable(t)
		old, err := Open(ctx, LocalStore(dir), Options{Now: fixedClock(), InlineDVs: true})
		if err != nil {
			t.Fatal(err)
		}
		a := dataFile(t, tbl.Location, 0, "eu", 0, 9)
		b := dataFile(t, tbl.Location, 0, "eu", 10, 19)
		c := appendCommit(tbl, 1, a, b)
		c.Deletes = map[string][]int64{a.Path: {2}, b.Path: {4}}
		if _, err := old.Publish(ctx, c); err != nil {
			t.Fatal(err)
		}
		for p, d := range dvsOf(t, dir, 0) {
			if d.StorageType != "i" {
				t.Fatalf("InlineDVs: %s has a DV of storageType %q", p, d.StorageType)
			}
		}
		if checkpoint {
			if err := writeCheckpoint(ctx, LocalStore(dir), old.snap, fixedClock()()); err != nil {
				t.Fatal(err)
			}
		}
		l := openLog(t, LocalStore(dir))
		c = appendCommit(tbl, 2)
		c.Deletes = map[string][]int64{a.Path: {2, 6}}
		if _, err := l.Publish(ctx, c); err != nil {
			t.Fatal(err)
		}
		l = openLog(t, LocalStore(dir))
		if got := dvRows(t, l, tbl.Location, a); !slices.Equal(got, []int64{2, 6}) {
			t.Fatalf("checkpoint %v: a's DV %v", checkpoint, got)
		}
		if got := dvRows(t, l, tbl.Location, b); !slices.Equal(got, []int64{4}) {
			t.Fatalf("checkpoint %v: b's DV %v", checkpoint, got)
		}
		relA, _ := relPath(tbl.Location, a.Path)
		relB, _ := relPath(tbl.Location, b.Path)
		if st := l.snap.files[relA].DeletionVector.StorageType; st != "u" {
			t.Fatalf("a's new DV is of storageType %q", st)
		}
		if st := l.snap.files[relB].DeletionVector.StorageType; st != "i" {
			t.Fatalf("b's untouched DV is of storageType %q", st)
		}
		checkpointKeepsDVs(t, l)
	}
}

// TestDVCheckpointCarriesOffset: a checkpoint keeps a 'u' DV's offset,
// and a log reopened from it reads the DV from its file to union the
// next deletes (nothing of it in memory).
func TestDVCheckpointCarriesOffset(t *testing.T) {
	ctx := context.Background()
	dir, tbl := dvTable(t)
	l, err := Open(ctx, LocalStore(dir), Options{Now: fixedClock(), CheckpointInterval: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := dataFile(t, tbl.Location, 0, "eu", 0, 9)
	b := dataFile(t, tbl.Location, 0, "eu", 10, 19)
	c := appendCommit(tbl, 1, a, b)
	c.Deletes = map[string][]int64{a.Path: {1}, b.Path: {2, 3}}
	if _, err := l.Publish(ctx, c); err != nil {
		t.Fatal(err)
	}
	c = appendCommit(tbl, 2)
	c.Deletes = map[string][]int64{b.Path: {8}}
	if _, err := l.Publish(ctx, c); err != nil {
		t.Fatal(err)
	}
	c = appendCommit(tbl, 3)
	c.Deletes = map[string][]int64{a.Path: {9}}
	res, err := l.Publish(ctx, c)
	if err != nil || res.CheckpointErr != nil || res.Version != 2 {
		t.Fatalf("version %+v, %v", res, err)
	}
	checkpointKeepsDVs(t, l)
	if err := os.Remove(filepath.Join(dir, commitName(1))); err != nil {
		t.Fatal(err) // the reopened log can only know the DVs from the checkpoint
	}
	l = openLog(t, LocalStore(dir))
	for p, f := range l.snap.files {
		if d := f.DeletionVector; d == nil || d.StorageType != "u" || d.Offset == nil || *d.Offset < 1 || f.dvRows != nil {
			t.Fatalf("%s from the checkpoint: %+v", p, d)
		}
	}
	c = appendCommit(tbl, 4)
	c.Deletes = map[string][]int64{a.Path: {0}, b.Path: {0}}
	if _, err := l.Publish(ctx, c); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, LocalStore(dir))
	if got := dvRows(t, l, tbl.Location, a); !slices.Equal(got, []int64{0, 1, 9}) {
		t.Fatalf("a's DV %v", got)
	}
	if got := dvRows(t, l, tbl.Location, b); !slices.Equal(got, []int64{0, 2, 3, 8}) {
		t.Fatalf("b's DV %v", got)
	}
}

// failingStore fails the put of its chosen kind: the commit file (the
// version's publication) or the DV file.
type failingStore struct {
	LocalStore
	commit, dv bool
}

var errInjected = errors.New("injected failure")

func (s failingStore) PutIfAbsent(ctx context.Context, name string, data []byte) error {
	if s.commit && strings.HasPrefix(name, logDir+"/") {
		return errInjected
	}
	return s.LocalStore.PutIfAbsent(ctx, name, data)
}

func (s failingStore) Put(ctx context.Context, name string, data []byte) error {
	if s.dv && strings.HasPrefix(name, dvFilePrefix) {
		return errInjected
	}
	return s.LocalStore.Put(ctx, name, data)
}

// TestDVFileBeforeVersion: the DV file is written before the version
// that references it: a failure to write it publishes nothing, and a
// crash after it (the version not published) leaves only an unreferenced
// DV file; the retry writes its own and the log reads right.
func TestDVFileBeforeVersion(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		st        failingStore
		leftFiles int
	}{
		{"the DV file fails", failingStore{dv: true}, 0},
		{"the version fails", failingStore{commit: true}, 1},
	} {
		dir, tbl := dvTable(t)
		a := dataFile(t, tbl.Location, 0, "eu", 0, 9)
		if _, err := openLog(t, LocalStore(dir)).Publish(ctx, appendCommit(tbl, 1, a)); err != nil {
			t.Fatal(err)
		}
		tc.st.LocalStore = LocalStore(dir)
		c := appendCommit(tbl, 2)
		c.Deletes = map[string][]int64{a.Path: {4}}
		if _, err := openLog(t, tc.st).Publish(ctx, c); !errors.Is(err, errInjected) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		l := openLog(t, LocalStore(dir))
		left := dvFiles(t, dir)
		if l.Version() != 0 || len(left) != tc.leftFiles {
			t.Fatalf("%s: version %d, DV files %v", tc.name, l.Version(), left)
		}
		for _, f := range left {
			if slices.Contains(l.Referenced(), f) {
				t.Fatalf("%s: the unpublished DV file %s is referenced", tc.name, f)
			}
		}
		if _, err := l.Publish(ctx, c); err != nil {
			t.Fatal(err)
		}
		if got := dvRows(t, openLog(t, LocalStore(dir)), tbl.Location, a); !slices.Equal(got, []int64{4}) {
			t.Fatalf("%s: a's DV after the retry %v", tc.name, got)
		}
	}
}
