package upsert

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Index is the key index of upsert tables on a node's data dir: per
// table and Kafka partition, key -> (data file, row position, offset) of
// the key's live row. It is an embedded store (bbolt), so it survives a
// restart and costs disk, not memory, per key.
//
// It is derived state: each table's index records the snapshot it
// reflects, is changed only after that snapshot is committed, and is
// rebuilt from the table when it reflects another one (missing, a crash
// between a commit and its index update, the committer role moved here
// from another node, a rewrite such as a rewind's delete).
type Index struct {
	db *bolt.DB
}

// Limits of an index key: bbolt keys are at most 32 KiB, so longer keys
// are stored by their SHA-256 (maxPlainKey: kept as they are up to this).
const maxPlainKey = 1024

var (
	bucketMeta  = []byte("meta")
	keySnapshot = []byte("snapshot")
	keyCount    = []byte("keys")
	prefixPart  = "p/"
)

// OpenIndex opens (creating) the key index file at path.
func OpenIndex(path string) (*Index, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening key index %s: %w", path, err)
	}
	return &Index{db: db}, nil
}

// Close closes the index file.
func (x *Index) Close() error { return x.db.Close() }

// FileBytes is the size of the index file (every upsert table of this
// node has its bucket in it): what it takes on the data dir's disk. It
// never shrinks; bbolt reuses the pages it frees.
func (x *Index) FileBytes() int64 {
	var n int64
	_ = x.db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// rowRef is where a key's live row is.
type rowRef struct {
	path   string
	pos    int64
	offset int64 // the row's Kafka offset, which orders two rows of a key
}

func encodeRef(r rowRef) []byte {
	b := make([]byte, 16, 16+len(r.path))
	binary.BigEndian.PutUint64(b, uint64(r.pos))
	binary.BigEndian.PutUint64(b[8:], uint64(r.offset))
	return append(b, r.path...)
}

func decodeRef(b []byte) (rowRef, error) {
	if len(b) < 16 {
		return rowRef{}, fmt.Errorf("key index value of %d bytes", len(b))
	}
	return rowRef{pos: int64(binary.BigEndian.Uint64(b)), offset: int64(binary.BigEndian.Uint64(b[8:])), path: string(b[16:])}, nil
}

// indexKey is a key as the store holds it: never empty (an empty Kafka
// key is a key), and hashed when long.
func indexKey(key []byte) []byte {
	tag := byte(1)
	if len(key) > maxPlainKey {
		h := sha256.Sum256(key)
		tag, key = 2, h[:]
	}
	// One allocation (append([]byte{tag}, key...) makes two).
	k := make([]byte, 1+len(key))
	k[0] = tag
	copy(k[1:], key)
	return k
}

// Snapshot returns the snapshot table's index reflects, false when it has
// none.
func (x *Index) Snapshot(table string) (int64, bool, error) {
	var (
		id int64
		ok bool
	)
	err := x.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(table))
		if b == nil {
			return nil
		}
		if m := b.Bucket(bucketMeta); m != nil {
			if v := m.Get(keySnapshot); len(v) == 8 {
				id, ok = int64(binary.BigEndian.Uint64(v)), true
			}
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("reading key index of %s: %w", table, err)
	}
	return id, ok, nil
}

// previous returns the rows the index holds for the changes' keys, in
// one read transaction.
func (x *Index) previous(table string, changes []change) ([]Delete, error) {
	var out []Delete
	err := x.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(table))
		if b == nil {
			return nil
		}
		for _, c := range changes {
			p := b.Bucket([]byte(prefixPart + c.tp))
			if p == nil {
				continue
			}
			if v := p.Get(indexKey(c.key)); v != nil {
				ref, err := decodeRef(v)
				if err != nil {
					return err
				}
				out = append(out, Delete{ref.path, ref.pos})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading key index of %s: %w", table, err)
	}
	return out, nil
}

// change is one key's new state after a commit: its new live row, or
// gone (a tombstone).
type change struct {
	tp   string
	key  []byte
	ref  rowRef
	gone bool
}

// apply records a commit's key changes and the snapshot they make, in one
// store transaction: the index never reflects half a commit.
func (x *Index) apply(table string, changes []change, snapshot int64) error {
	keys := sortChanges(changes)
	err := x.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(table))
		if err != nil {
			return err
		}
		var delta int64
		for i, c := range changes {
			p, err := b.CreateBucketIfNotExists([]byte(prefixPart + c.tp))
			if err != nil {
				return err
			}
			k := keys[i]
			had := p.Get(k) != nil
			if c.gone {
				err = p.Delete(k)
				delta -= boolInt(had)
			} else {
				err = p.Put(k, encodeRef(c.ref))
				delta += boolInt(!had)
			}
			if err != nil {
				return err
			}
		}
		if err := addKeys(b, delta); err != nil {
			return err
		}
		return setSnapshot(b, snapshot)
	})
	if err != nil {
		return fmt.Errorf("updating key index of %s: %w", table, err)
	}
	return nil
}

func setSnapshot(b *bolt.Bucket, snapshot int64) error {
	m, err := b.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, uint64(snapshot))
	return m.Put(keySnapshot, v)
}

// drop forgets table's index (before a rebuild).
func (x *Index) drop(table string) error {
	err := x.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte(table)) == nil {
			return nil
		}
		return tx.DeleteBucket([]byte(table))
	})
	if err != nil {
		return fmt.Errorf("dropping key index of %s: %w", table, err)
	}
	return nil
}

// addKeys adds delta to the count of keys a table's index holds, kept
// beside them so that reading it costs nothing per key.
func addKeys(b *bolt.Bucket, delta int64) error {
	if delta == 0 {
		return nil
	}
	m, err := b.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	var n int64
	if v := m.Get(keyCount); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, uint64(n+delta))
	return m.Put(keyCount, v)
}

// Keys returns how many keys table's index holds.
func (x *Index) Keys(table string) (int64, error) {
	var n int64
	err := x.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(table)); b != nil {
			if m := b.Bucket(bucketMeta); m != nil {
				if v := m.Get(keyCount); len(v) == 8 {
					n = int64(binary.BigEndian.Uint64(v))
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reading key index of %s: %w", table, err)
	}
	return n, nil
}

// sortChanges orders changes by partition and stored key, and returns
// their stored keys in that order: bbolt splits its pages only when a
// transaction commits, so keys put in random order cost a copy of the
// page's tail each (100,000 new keys in map order took 15 s, in order well
// under one).
func sortChanges(changes []change) [][]byte {
	return sortByIndexKey(changes, func(c *change) (string, []byte) { return c.tp, c.key })
}

// sortByIndexKey orders items by partition and stored key (indexKey),
// items of one key in their order, and returns the stored keys in the new
// order. Each stored key is made once: made in the comparison (twice per
// comparison, an allocation each), they took half of the CPU of the index
// updates in `floe bench --upsert-passes` (docs/benchmarks.md).
func sortByIndexKey[T any](items []T, keyOf func(*T) (tp string, key []byte)) [][]byte {
	// The sort moves these small entries, not the items.
	type entry struct {
		tp string
		k  []byte
		i  int
	}
	s := make([]entry, len(items))
	for i := range items {
		tp, key := keyOf(&items[i])
		s[i] = entry{tp, indexKey(key), i}
	}
	slices.SortFunc(s, func(a, b entry) int {
		return cmp.Or(strings.Compare(a.tp, b.tp), bytes.Compare(a.k, b.k), cmp.Compare(a.i, b.i))
	})
	sorted := make([]T, len(items))
	keys := make([][]byte, len(s))
	for j, e := range s {
		sorted[j], keys[j] = items[e.i], e.k
	}
	copy(items, sorted)
	return keys
}

// IndexSize is where a key index file's bytes go: the pages of its
// trees and the rest (free pages a commit's copy-on-write left behind,
// which bbolt reuses but never returns: the file does not shrink).
type IndexSize struct {
	FileBytes  int64 // the file
	PageBytes  int64 // the pages its trees use (branch and leaf)
	InuseBytes int64 // the bytes of those pages that hold data
}

// ReadIndexSize measures the key index file at path, which no process
// may hold open (bbolt locks it): for `floe bench --upsert-passes`.
func ReadIndexSize(path string) (IndexSize, error) {
	var sz IndexSize
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return sz, fmt.Errorf("opening key index %s: %w", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		sz.FileBytes = tx.Size()
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
			st := b.Stats()
			sz.PageBytes += int64(st.BranchAlloc + st.LeafAlloc)
			sz.InuseBytes += int64(st.BranchInuse + st.LeafInuse)
			return nil
		})
	})
	if err != nil {
		return sz, fmt.Errorf("measuring key index %s: %w", path, err)
	}
	return sz, nil
}
