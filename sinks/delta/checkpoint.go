package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Classic checkpoints of the V1 spec ("Checkpoints", "Checkpoint Schema"):
// one Parquet file, one action per row, each action a struct column.
// Rows go through arrow's JSON form both ways, so the checkpoint reader
// shares the commit reader's decoder and checks.

// DefaultCheckpointInterval is the number of versions between checkpoints.
const DefaultCheckpointInterval = 10

// maxCheckpointPage bounds a checkpoint page, compressed or not, so a
// corrupt page header cannot make the reader allocate arrow's default of
// 256 MiB per page (writers cut pages at about 1 MiB).
const maxCheckpointPage = 16 << 20

// tombstoneRetention is how long a remove stays in checkpoints (Delta's
// default delta.deletedFileRetentionDuration, one week): a reader of an
// older snapshot may still read the file until then.
const tombstoneRetention = 7 * 24 * time.Hour

var (
	strMap = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)
	strs   = arrow.ListOf(arrow.BinaryTypes.String)
	// dvStruct is the DeletionVectorDescriptor of add and remove, with
	// the types Delta's own checkpoints give it.
	dvStruct = arrow.StructOf(field("storageType", arrow.BinaryTypes.String),
		field("pathOrInlineDv", arrow.BinaryTypes.String), field("offset", arrow.PrimitiveTypes.Int32),
		field("sizeInBytes", arrow.PrimitiveTypes.Int32), field("cardinality", arrow.PrimitiveTypes.Int64))

	checkpointSchema = arrow.NewSchema([]arrow.Field{
		{Name: "txn", Nullable: true, Type: arrow.StructOf(
			field("appId", arrow.BinaryTypes.String), field("version", arrow.PrimitiveTypes.Int64),
			field("lastUpdated", arrow.PrimitiveTypes.Int64))},
		{Name: "add", Nullable: true, Type: arrow.StructOf(
			field("path", arrow.BinaryTypes.String), field("partitionValues", strMap),
			field("size", arrow.PrimitiveTypes.Int64), field("modificationTime", arrow.PrimitiveTypes.Int64),
			field("dataChange", arrow.FixedWidthTypes.Boolean), field("stats", arrow.BinaryTypes.String),
			field("tags", strMap), field("deletionVector", dvStruct))},
		{Name: "remove", Nullable: true, Type: arrow.StructOf(
			field("path", arrow.BinaryTypes.String), field("deletionTimestamp", arrow.PrimitiveTypes.Int64),
			field("dataChange", arrow.FixedWidthTypes.Boolean), field("extendedFileMetadata", arrow.FixedWidthTypes.Boolean),
			field("partitionValues", strMap), field("size", arrow.PrimitiveTypes.Int64),
			field("deletionVector", dvStruct))},
		{Name: "metaData", Nullable: true, Type: arrow.StructOf(
			field("id", arrow.BinaryTypes.String), field("name", arrow.BinaryTypes.String),
			field("description", arrow.BinaryTypes.String),
			field("format", arrow.StructOf(field("provider", arrow.BinaryTypes.String), field("options", strMap))),
			field("schemaString", arrow.BinaryTypes.String), field("partitionColumns", strs),
			field("createdTime", arrow.PrimitiveTypes.Int64), field("configuration", strMap))},
		{Name: "protocol", Nullable: true, Type: arrow.StructOf(
			field("minReaderVersion", arrow.PrimitiveTypes.Int32), field("minWriterVersion", arrow.PrimitiveTypes.Int32),
			field("readerFeatures", strs), field("writerFeatures", strs))},
	}, nil)
)

func field(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// checkpointRow is one row in arrow's JSON form: maps as key/value lists.
type checkpointRow struct {
	Txn      *Txn       `json:"txn,omitempty"`
	Add      *rowAdd    `json:"add,omitempty"`
	Remove   *rowRemove `json:"remove,omitempty"`
	MetaData *rowMeta   `json:"metaData,omitempty"`
	Protocol *Protocol  `json:"protocol,omitempty"`
}

type rowAdd struct {
	Path             string          `json:"path"`
	PartitionValues  []kv[*string]   `json:"partitionValues"`
	Size             int64           `json:"size"`
	ModificationTime int64           `json:"modificationTime"`
	DataChange       bool            `json:"dataChange"`
	Stats            *string         `json:"stats"`
	Tags             []kv[string]    `json:"tags"`
	DeletionVector   *DeletionVector `json:"deletionVector"`
}

type rowRemove struct {
	Path                 string          `json:"path"`
	DeletionTimestamp    *int64          `json:"deletionTimestamp"`
	DataChange           bool            `json:"dataChange"`
	ExtendedFileMetadata bool            `json:"extendedFileMetadata"`
	PartitionValues      []kv[*string]   `json:"partitionValues"`
	Size                 *int64          `json:"size"`
	DeletionVector       *DeletionVector `json:"deletionVector"`
}

type rowMeta struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Format      struct {
		Provider string       `json:"provider"`
		Options  []kv[string] `json:"options"`
	} `json:"format"`
	SchemaString     string       `json:"schemaString"`
	PartitionColumns []string     `json:"partitionColumns"`
	CreatedTime      *int64       `json:"createdTime"`
	Configuration    []kv[string] `json:"configuration"`
}

// checkpointRows lists a snapshot's checkpoint rows: protocol, metaData,
// txns, live files and unexpired tombstones, in a fixed order.
func checkpointRows(s *snapshot, now time.Time) (rows []checkpointRow, adds int) {
	rows = append(rows, checkpointRow{Protocol: s.protocol})
	m := &rowMeta{ID: s.metadata.ID, Name: s.metadata.Name, Description: s.metadata.Description,
		SchemaString: s.metadata.SchemaString, PartitionColumns: s.metadata.PartitionColumns,
		CreatedTime: s.metadata.CreatedTime, Configuration: pairs(s.metadata.Configuration)}
	m.Format.Provider, m.Format.Options = s.metadata.Format.Provider, pairs(s.metadata.Format.Options)
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	rows = append(rows, checkpointRow{MetaData: m})
	for _, app := range sortedKeys(s.txns) {
		rows = append(rows, checkpointRow{Txn: &Txn{AppID: app, Version: s.txns[app]}})
	}
	for _, p := range sortedKeys(s.files) {
		a := s.files[p]
		ra := &rowAdd{Path: a.Path, PartitionValues: pairs(a.PartitionValues), Size: a.Size,
			ModificationTime: a.ModificationTime, Tags: pairs(a.Tags), DeletionVector: a.DeletionVector}
		if ra.PartitionValues == nil {
			ra.PartitionValues = []kv[*string]{}
		}
		if a.Stats != "" {
			ra.Stats = &a.Stats
		}
		rows = append(rows, checkpointRow{Add: ra})
	}
	cutoff := now.Add(-tombstoneRetention).UnixMilli()
	for _, p := range sortedKeys(s.removed) {
		r := s.removed[p]
		if r.DeletionTimestamp != nil && *r.DeletionTimestamp < cutoff {
			continue
		}
		rows = append(rows, checkpointRow{Remove: &rowRemove{Path: r.Path, DeletionTimestamp: r.DeletionTimestamp,
			ExtendedFileMetadata: r.ExtendedFileMetadata, PartitionValues: pairs(r.PartitionValues), Size: r.Size,
			DeletionVector: r.DeletionVector}})
	}
	return rows, len(s.files)
}

// encodeCheckpoint renders a snapshot as a classic checkpoint file.
func encodeCheckpoint(s *snapshot, now time.Time) (data []byte, rows, adds int, err error) {
	list, adds := checkpointRows(s, now)
	// Row by row: arrow's stream decoder copies its whole remaining buffer
	// for every escaped string (the stats), quadratic in one large stream.
	bldr := array.NewRecordBuilder(memory.DefaultAllocator, checkpointSchema)
	defer bldr.Release()
	for _, r := range list {
		row, err := json.Marshal(r)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("encoding checkpoint row: %w", err)
		}
		if err := bldr.UnmarshalJSON(row); err != nil {
			return nil, 0, 0, fmt.Errorf("building checkpoint rows: %w", err)
		}
	}
	rec := bldr.NewRecordBatch()
	defer rec.Release()
	var out bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(checkpointSchema, &out, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, 0, 0, fmt.Errorf("opening checkpoint writer: %w", err)
	}
	if err := w.Write(rec); err != nil {
		return nil, 0, 0, fmt.Errorf("writing checkpoint: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, 0, 0, fmt.Errorf("closing checkpoint: %w", err)
	}
	return out.Bytes(), len(list), adds, nil
}

// writeCheckpoint writes the checkpoint of snapshot s, then
// _last_checkpoint. A classic checkpoint may be rewritten (the protocol's
// "latest writer wins"): its content is determined by the version.
func writeCheckpoint(ctx context.Context, st Store, s *snapshot, now time.Time) error {
	data, rows, adds, err := encodeCheckpoint(s, now)
	if err != nil {
		return fmt.Errorf("checkpoint of version %d: %w", s.version, err)
	}
	if err := st.Put(ctx, checkpointName(s.version), data); err != nil {
		return fmt.Errorf("checkpoint of version %d: %w", s.version, err)
	}
	lc, err := json.Marshal(lastCheckpoint{Version: s.version, Size: int64(rows), SizeInBytes: int64(len(data)), NumOfAddFiles: int64(adds)})
	if err != nil {
		return fmt.Errorf("encoding _last_checkpoint: %w", err)
	}
	if err := st.Put(ctx, lastCheckpointName, lc); err != nil {
		return fmt.Errorf("checkpoint of version %d: %w", s.version, err)
	}
	return nil
}

// readCheckpoint loads a classic checkpoint as the snapshot at its version.
func readCheckpoint(ctx context.Context, st Store, v int64) (*snapshot, error) {
	b, err := st.Get(ctx, checkpointName(v), MaxCheckpointBytes)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %d: %w", v, err)
	}
	actions, err := decodeCheckpoint(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: %w", v, err)
	}
	s := newSnapshot()
	s.apply(v, actions)
	s.txnAt = map[string]int64{} // a checkpoint does not say which version set a txn
	if s.protocol == nil || s.metadata == nil {
		return nil, fmt.Errorf("%w: checkpoint %d has no protocol or metaData", ErrCorruptLog, v)
	}
	return s, nil
}

// decodeCheckpoint reads a checkpoint's rows as actions. A malformed file
// may make the Parquet reader panic; that is a corrupt log, not a crash of
// the committer.
func decodeCheckpoint(ctx context.Context, b []byte) (_ []Action, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: unreadable checkpoint: %v", ErrCorruptLog, r)
		}
	}()
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.MaxCompressedPageSize, props.MaxUncompressedPageSize = maxCheckpointPage, maxCheckpointPage
	pf, err := file.NewParquetReader(bytes.NewReader(b), file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptLog, err)
	}
	defer pf.Close()
	if err := checkChunks(pf, int64(len(b))); err != nil {
		return nil, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096, Parallel: false}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptLog, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptLog, err)
	}
	defer rr.Release()
	var js bytes.Buffer
	for rr.Next() {
		if err := array.RecordToJSON(rr.RecordBatch(), &js); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorruptLog, err)
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", ErrCorruptLog, err)
	}
	return parseActions(js.Bytes())
}

// checkChunks refuses a file whose column chunks lie outside it: arrow's
// reader would allocate what the footer claims, in goroutines of its own
// where a panic cannot be recovered (found by fuzzing the reader).
func checkChunks(pf *file.Reader, size int64) error {
	md := pf.MetaData()
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		if rg.NumRows() < 0 || rg.NumRows() > size {
			return fmt.Errorf("%w: checkpoint row group %d claims %d rows in %d bytes", ErrCorruptLog, i, rg.NumRows(), size)
		}
		for c := 0; c < rg.NumColumns(); c++ {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("%w: checkpoint column %d: %v", ErrCorruptLog, c, err)
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
				start = cc.DictionaryPageOffset()
			}
			n := cc.TotalCompressedSize()
			if start < 0 || n < 0 || start > size || n > size-start || cc.NumValues() < 0 || cc.NumValues() > size*8 {
				return fmt.Errorf("%w: checkpoint column chunk %d/%d (offset %d, %d bytes) outside the file's %d bytes",
					ErrCorruptLog, i, c, start, n, size)
			}
		}
	}
	return nil
}
