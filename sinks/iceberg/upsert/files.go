package upsert

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/floe-io/floe/sinks/sink"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// keyedRow is one row of a data file as upsert sees it.
type keyedRow struct {
	pos    int64
	tp     string // topic/partition
	offset int64
	key    []byte // nil: the row has no key (never replaced)
}

// readKeyedRows reads the key, partition and offset of every row of a data
// file, in position order. keyCols empty: the key is the Kafka record key;
// otherwise the named top-level columns, encoded so that equal values
// (an int widened to a long included) give equal keys. A column a file
// predates reads as null.
func readKeyedRows(ctx context.Context, fs icebergio.IO, path string, keyCols []string) ([]keyedRow, error) {
	tbl, err := ReadColumns(ctx, fs, path, append([]string{sink.ColTopic, sink.ColPartition, sink.ColOffset}, keyColumns(keyCols)...))
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	n := tbl.NumRows()
	rows := make([]keyedRow, n)
	for i := range rows {
		rows[i].pos = int64(i)
	}
	cols := make([]arrow.Array, tbl.NumCols())
	for c := range cols {
		cols[c], err = concat(tbl.Column(c))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		defer cols[c].Release()
	}
	topic, part, off := cols[0], cols[1], cols[2]
	for i := range rows {
		if topic.IsNull(i) || part.IsNull(i) || off.IsNull(i) {
			// Every row Floe writes has them: a file without them is
			// not one of its data files.
			return nil, fmt.Errorf("reading %s: row %d has no Kafka topic, partition or offset", path, i)
		}
		rows[i].tp = topic.ValueStr(i) + "/" + part.ValueStr(i)
		if rows[i].offset, err = strconv.ParseInt(off.ValueStr(i), 10, 64); err != nil {
			return nil, fmt.Errorf("reading %s: offset of row %d: %w", path, i, err)
		}
		rows[i].key = encodeKey(cols[3:], i, len(keyCols) == 0)
	}
	return rows, nil
}

func keyColumns(keyCols []string) []string {
	if len(keyCols) == 0 {
		return []string{sink.ColKey}
	}
	return keyCols
}

// encodeKey encodes row i's key: the Kafka key's bytes, or each field as
// a null marker or its value's text with its length. Nil when every key
// column is null.
func encodeKey(cols []arrow.Array, i int, kafkaKey bool) []byte {
	if kafkaKey {
		c := cols[0]
		if c.IsNull(i) {
			return nil
		}
		if b, ok := c.(*array.Binary); ok {
			return append([]byte{}, b.Value(i)...)
		}
		return []byte(c.ValueStr(i))
	}
	var buf bytes.Buffer
	present := false
	for _, c := range cols {
		if c.IsNull(i) {
			buf.WriteByte(0)
			continue
		}
		present = true
		s := c.ValueStr(i)
		buf.WriteByte(1)
		buf.WriteString(strconv.Itoa(len(s)))
		buf.WriteByte(':')
		buf.WriteString(s)
	}
	if !present {
		return nil
	}
	return buf.Bytes()
}

// ReadColumns reads the named top-level columns of a Parquet file; a
// column the file lacks comes back nil.
func ReadColumns(ctx context.Context, fs icebergio.IO, path string, names []string) (arrow.Table, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var leaves []int
	for _, name := range names {
		if idx := pf.MetaData().Schema.ColumnIndexByName(name); idx >= 0 {
			leaves = append(leaves, idx)
		}
	}
	groups := make([]int, pf.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	got, err := fr.ReadRowGroups(ctx, leaves, groups)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer got.Release()
	at := make([]int, len(names))
	for j, name := range names {
		at[j] = -1
		if idx := got.Schema().FieldIndices(name); len(idx) > 0 {
			at[j] = idx[0]
		}
	}
	return placeColumns(got, at), nil
}

// placeColumns returns a table whose column j is got's column at[j], or a
// column of nulls where at[j] is -1.
func placeColumns(got arrow.Table, at []int) arrow.Table {
	fields := make([]arrow.Field, len(at))
	cols := make([]arrow.Column, len(at))
	for j, k := range at {
		if k < 0 {
			fields[j] = arrow.Field{Name: "missing", Type: arrow.BinaryTypes.Binary, Nullable: true}
			b := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
			b.AppendNulls(int(got.NumRows()))
			arr := b.NewArray()
			b.Release()
			ch := arrow.NewChunked(fields[j].Type, []arrow.Array{arr})
			arr.Release()
			cols[j] = *arrow.NewColumn(fields[j], ch)
			ch.Release()
			continue
		}
		fields[j] = got.Schema().Field(k)
		c := got.Column(k)
		c.Retain()
		cols[j] = *c
	}
	out := array.NewTable(arrow.NewSchema(fields, nil), cols, got.NumRows())
	for i := range cols {
		cols[i].Release()
	}
	return out
}

func concat(c *arrow.Column) (arrow.Array, error) {
	chunks := c.Data().Chunks()
	if len(chunks) == 1 {
		chunks[0].Retain()
		return chunks[0], nil
	}
	return array.Concatenate(chunks, memory.DefaultAllocator)
}

// Field ids and names of a position-delete file's columns (the Iceberg
// spec's reserved ids).
const (
	posDeleteFilePathID = 2147483546
	posDeletePosID      = 2147483545
)

// Delete is one deleted row: its data file and position.
type Delete struct {
	Path string
	Pos  int64
}

// writePosDeletes writes one position-delete file (format v2) of dels,
// which must be sorted by path then position as the spec asks, in the
// table's data directory, and returns its entry for the row delta: in
// spec with the partition values of the data files it targets (nil for an
// unpartitioned spec), since a reader applies it only to those.
func writePosDeletes(fs icebergio.IO, location string, spec iceberg.PartitionSpec, partition map[int]any, dels []Delete) (iceberg.DataFile, error) {
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("writing position deletes: the table's file system cannot write")
	}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(posDeleteFilePathID)})},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.Itoa(posDeletePosID)})},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, d := range dels {
		b.Field(0).(*array.StringBuilder).Append(d.Path)
		b.Field(1).(*array.Int64Builder).Append(d.Pos)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := location + "/data/" + uuid.NewString() + "-deletes.parquet"
	out, err := wfs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating position-delete file %s: %w", path, err)
	}
	cw := &countingWriter{w: out}
	w, err := pqarrow.NewFileWriter(sc, cw, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("writing position-delete file %s: %w", path, err)
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, fmt.Errorf("writing position-delete file %s: %w", path, err)
	}
	if err := w.Close(); err != nil { // closes out too
		return nil, fmt.Errorf("writing position-delete file %s: %w", path, err)
	}
	bld, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentPosDeletes, path, iceberg.ParquetFile, partition, nil, nil, int64(len(dels)), cw.n)
	if err != nil {
		return nil, fmt.Errorf("describing position-delete file %s: %w", path, err)
	}
	// Bounds on file_path let a reader skip the file for data files it
	// cannot touch.
	lo, hi := []byte(dels[0].Path), []byte(dels[len(dels)-1].Path)
	bld.LowerBoundValues(map[int][]byte{posDeleteFilePathID: lo}).UpperBoundValues(map[int][]byte{posDeleteFilePathID: hi})
	// No referenced_data_file even when one file is targeted: iceberg-go
	// then checks the file is in the table before the commit, and the
	// file this very commit adds is not.
	return bld.Build(), nil
}

type countingWriter struct {
	w interface {
		Write([]byte) (int, error)
		Close() error
	}
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Close() error { return c.w.Close() }
