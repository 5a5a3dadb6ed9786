package floebench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// tableCheck is what reading a benchmark table back found: the independent
// count of (partition, offset) pairs against the topic's end offsets, and
// each steady record's freshness.
type tableCheck struct {
	metadata                 string
	rows, dups, missing, out int64
	freshness                []time.Duration
	unseen                   int
}

func (c tableCheck) verdict() string {
	if c.dups == 0 && c.missing == 0 && c.out == 0 && c.unseen == 0 {
		return fmt.Sprintf("OK: %d rows, every (partition, offset) once", c.rows)
	}
	return fmt.Sprintf("FAILED: %d rows, %d duplicated, %d missing, %d outside the topic, %d steady records in no append", c.rows, c.dups, c.missing, c.out, c.unseen)
}

// checkTable reads the partition and offset columns of every data file of
// the table in tableDir: the current snapshot's files are counted against
// ends; the files each append snapshot added date the steady records
// (freshness: the snapshot's commit time minus the record's acknowledgement).
func checkTable(ctx context.Context, tableDir string, ends map[int32]int64, acks []steadyAck) (tableCheck, error) {
	var c tableCheck
	path, err := newestMetadata(tableDir)
	if err != nil {
		return c, err
	}
	c.metadata = "file://" + path
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"bench", "check"}, c.metadata, icebergio.LoadFSFunc(nil, c.metadata), nil)
	if err != nil {
		return c, fmt.Errorf("loading %s: %w", c.metadata, err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return c, err
	}
	live, added, err := tableFiles(tbl, fs)
	if err != nil {
		return c, err
	}
	counts := map[int32][]uint8{}
	for p, e := range ends {
		counts[p] = make([]uint8, e)
	}
	committed := ackIndex(acks)
	for f := range unionKeys(live, added) {
		err := readOffsets(ctx, f, func(p int32, o int64) {
			if _, ok := live[f]; ok {
				c.count(counts, p, o)
			}
			if at, ok := added[f]; ok {
				committed.commit(p, o, at)
			}
		})
		if err != nil {
			return c, fmt.Errorf("reading %s: %w", f, err)
		}
	}
	for _, cs := range counts {
		for _, n := range cs {
			if n == 0 {
				c.missing++
			}
		}
	}
	for _, a := range acks {
		if at, ok := committed.at(a.partition, a.offset); ok {
			c.freshness = append(c.freshness, at.Sub(a.at))
		} else {
			c.unseen++
		}
	}
	return c, nil
}

func (c *tableCheck) count(counts map[int32][]uint8, p int32, o int64) {
	c.rows++
	cs, ok := counts[p]
	if !ok || o < 0 || o >= int64(len(cs)) {
		c.out++
		return
	}
	if cs[o] == 1 {
		c.dups++
	}
	if cs[o] < 255 {
		cs[o]++
	}
}

// tableFiles lists the current snapshot's data files and, for each append
// snapshot, the files it added with its commit time.
func tableFiles(tbl *table.Table, fs icebergio.IO) (map[string]struct{}, map[string]time.Time, error) {
	live, added := map[string]struct{}{}, map[string]time.Time{}
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return nil, nil, errors.New("the table has no snapshot")
	}
	for _, s := range tbl.Metadata().Snapshots() {
		isCur := s.SnapshotID == cur.SnapshotID
		isAppend := s.Summary != nil && s.Summary.Operation == table.OpAppend
		if !isCur && !isAppend {
			continue
		}
		mfs, err := s.Manifests(fs)
		if err != nil {
			return nil, nil, fmt.Errorf("manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, mf := range mfs {
			ents, err := mf.FetchEntries(fs, true)
			if err != nil {
				return nil, nil, err
			}
			for _, e := range ents {
				path := e.DataFile().FilePath()
				if isCur && e.Status() != iceberg.EntryStatusDELETED {
					live[path] = struct{}{}
				}
				if isAppend && e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == s.SnapshotID {
					added[path] = time.UnixMilli(s.TimestampMs)
				}
			}
		}
	}
	return live, added, nil
}

func unionKeys[V1, V2 any](a map[string]V1, b map[string]V2) map[string]struct{} {
	out := map[string]struct{}{}
	for k := range a {
		out[k] = struct{}{}
	}
	for k := range b {
		out[k] = struct{}{}
	}
	return out
}

// readOffsets calls fn with the _kafka_partition and _kafka_offset of every
// row of a local Parquet data file.
func readOffsets(ctx context.Context, path string, fn func(int32, int64)) error {
	rdr, err := file.OpenParquetFile(strings.TrimPrefix(path, "file://"), false)
	if err != nil {
		return err
	}
	defer rdr.Close()
	sc := rdr.MetaData().Schema
	pi, oi := sc.ColumnIndexByName("_kafka_partition"), sc.ColumnIndexByName("_kafka_offset")
	if pi < 0 || oi < 0 {
		return errors.New("no _kafka_partition or _kafka_offset column")
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, []int{pi, oi}, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		ps, ok1 := rec.Column(0).(*array.Int32)
		offs, ok2 := rec.Column(1).(*array.Int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("partition and offset columns are %s and %s", rec.Column(0).DataType(), rec.Column(1).DataType())
		}
		for i := range ps.Len() {
			fn(ps.Value(i), offs.Value(i))
		}
	}
	return rr.Err()
}

// ackTimes dates steady records by the first append holding them: per
// partition, from the partition's first steady offset.
type ackTimes map[int32]*ackRange

type ackRange struct {
	base int64
	at   []time.Time
}

func ackIndex(acks []steadyAck) ackTimes {
	idx, last := ackTimes{}, map[int32]int64{}
	for _, a := range acks {
		r := idx[a.partition]
		if r == nil {
			r = &ackRange{base: a.offset}
			idx[a.partition] = r
		}
		r.base, last[a.partition] = min(r.base, a.offset), max(last[a.partition], a.offset)
	}
	for p, r := range idx {
		r.at = make([]time.Time, last[p]-r.base+1)
	}
	return idx
}

func (t ackTimes) commit(p int32, o int64, at time.Time) {
	r := t[p]
	if r == nil || o < r.base || o-r.base >= int64(len(r.at)) {
		return
	}
	if cur := r.at[o-r.base]; cur.IsZero() || at.Before(cur) {
		r.at[o-r.base] = at
	}
}

func (t ackTimes) at(p int32, o int64) (time.Time, bool) {
	r := t[p]
	if r == nil || o < r.base || o-r.base >= int64(len(r.at)) {
		return time.Time{}, false
	}
	at := r.at[o-r.base]
	return at, !at.IsZero()
}
