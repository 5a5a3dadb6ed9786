package upsert

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	bolt "go.etcd.io/bbolt"
)

// rebuildIndex scans the live keyed rows of tbl into the (empty) index of key,
// one store transaction per data file.
func rebuildIndex(ctx context.Context, x *Index, tbl *table.Table, key string, up Spec) ([]Delete, int64, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, 0, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, 0, err
	}
	deleted := map[string]map[int64]bool{} // data file -> deleted positions
	read := map[string]bool{}              // delete files read
	var (
		stray []Delete
		rows  int64
		batch []keyedRef
	)
	for _, t := range tasks {
		for _, d := range t.DeleteFiles {
			if read[d.FilePath()] {
				continue
			}
			read[d.FilePath()] = true
			if err := ReadDeletes(ctx, fs, d.FilePath(), deleted); err != nil {
				return nil, 0, err
			}
		}
		path := t.File.FilePath()
		keyed, err := readKeyedRows(ctx, fs, path, up.KeyCols)
		if err != nil {
			return nil, 0, err
		}
		gone := deleted[path]
		for _, r := range keyed {
			if !gone[r.pos] && r.key != nil {
				batch = append(batch, keyedRef{r.tp, r.key, rowRef{path: path, pos: r.pos, offset: r.offset}})
			}
		}
		if len(batch) >= rebuildBatch {
			if stray, err = x.putBatch(key, batch, stray); err != nil {
				return nil, 0, err
			}
			rows += int64(len(batch))
			batch = batch[:0]
		}
	}
	if stray, err = x.putBatch(key, batch, stray); err != nil {
		return nil, 0, err
	}
	rows += int64(len(batch))
	return stray, rows, nil
}

// rebuildBatch is how many rows a rebuild stores per store transaction:
// each transaction syncs the file once, and its dirty pages stay in memory
// until then.
const rebuildBatch = 50_000

type keyedRef struct {
	tp  string
	key []byte
	ref rowRef
}

// putBatch stores a batch of a rebuild's rows in one transaction, adding
// the rows that lost to a newer row of their key to stray.
func (x *Index) putBatch(key string, batch []keyedRef, stray []Delete) ([]Delete, error) {
	if len(batch) == 0 {
		return stray, nil
	}
	// In key order, as sortChanges says why; the rows of a key in their
	// order, so that of two rows of a key the later-read one still meets
	// the earlier.
	keys := sortByIndexKey(batch, func(k *keyedRef) (string, []byte) { return k.tp, k.key })
	err := x.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(key))
		if err != nil {
			return err
		}
		var added int64
		for i, k := range batch {
			loser, err := putNewer(b, k.tp, keys[i], k.ref)
			if err != nil {
				return err
			}
			if loser != nil {
				stray = append(stray, Delete{loser.path, loser.pos})
			} else {
				added++
			}
		}
		return addKeys(b, added)
	})
	return stray, err
}

// putNewer stores ref for the stored key k (indexKey) unless the index
// holds a row of a higher offset; it returns the row that lost, if any.
func putNewer(b *bolt.Bucket, tp string, k []byte, ref rowRef) (*rowRef, error) {
	p, err := b.CreateBucketIfNotExists([]byte(prefixPart + tp))
	if err != nil {
		return nil, err
	}
	if v := p.Get(k); v != nil {
		old, err := decodeRef(v)
		if err != nil {
			return nil, err
		}
		if old.offset > ref.offset {
			return &ref, nil
		}
		if err := p.Put(k, encodeRef(ref)); err != nil {
			return nil, err
		}
		return &old, nil
	}
	return nil, p.Put(k, encodeRef(ref))
}

// ReadDeletes adds the positions a position-delete file deletes to
// deleted, by data file.
func ReadDeletes(ctx context.Context, fs icebergio.IO, path string, deleted map[string]map[int64]bool) error {
	tbl, err := ReadColumns(ctx, fs, path, []string{"file_path", "pos"})
	if err != nil {
		return err
	}
	defer tbl.Release()
	paths, err := concat(tbl.Column(0))
	if err != nil {
		return err
	}
	defer paths.Release()
	pos, err := concat(tbl.Column(1))
	if err != nil {
		return err
	}
	defer pos.Release()
	ps, ok1 := paths.(*array.String)
	po, ok2 := pos.(*array.Int64)
	if !ok1 || !ok2 {
		return fmt.Errorf("reading position-delete file %s: unexpected column types %s, %s", path, paths.DataType(), pos.DataType())
	}
	for i := 0; i < ps.Len(); i++ {
		m := deleted[ps.Value(i)]
		if m == nil {
			m = map[int64]bool{}
			deleted[ps.Value(i)] = m
		}
		m[po.Value(i)] = true
	}
	return nil
}
