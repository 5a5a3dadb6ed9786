package iceberg

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/localfs"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// Catalog is what the sink needs from the catalog of record.
type Catalog interface {
	catalog.Catalog
	Binder
	EnsureNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error
}

// Binder runs iceberg-go transactions as a table's committer (the catalog
// of record's Bind): tables loaded through stage or apply commit under
// *req, fenced by its committer. A commit through stage writes the metadata
// and holds the pointer swap; the next commit through apply makes every
// held swap, its own and req's ledger commit one replicated entry. The
// session reads *req when it applies.
type Binder interface {
	Bind(req *ledger.CommitRequest) (stage, apply table.CatalogIO)
}

// bindMaintenance binds a maintenance commit of the table key (the main
// table's role, which also fences its dead-letter table). It names no
// ledger entries and no commit id: it moves no offsets, and only appends
// and rewinds are identified by a commit id in the replicated state.
func (s *Sink) bindMaintenance(key string, committer ledger.Assignment, at time.Time) table.CatalogIO {
	_, apply := s.cat.Bind(&ledger.CommitRequest{Table: key, Committer: committer, At: at.UnixMilli()})
	return apply
}

// Sink writes and commits Iceberg tables. It implements worker.Sink.
type Sink struct {
	cat        Catalog
	targetSize int64
	log        *slog.Logger

	mu    sync.Mutex
	locks map[string]*sync.Mutex // per table: serializes schema changes

	nsLocations map[string]string // namespace -> location of its tables

	fence    Fence    // set once before use (SetFence); nil deletes nothing
	follower Follower // set once before use (SetFollower); nil writes no second log

	keys *upsertsink.Keeper // upsert tables' key index and counters (sinks/iceberg/upsert)
}

// New returns a sink writing data files of about targetSize bytes.
// nsLocations optionally places namespaces' tables (namespace -> location).
func New(cat Catalog, targetSize int64, log *slog.Logger, nsLocations map[string]string) *Sink {
	if log == nil {
		log = slog.Default()
	}
	// file:// locations name files literally, as keys on S3 (partition
	// paths, partpath.go); the node installs it too, before any table IO.
	localfs.Install()
	return &Sink{cat: cat, targetSize: targetSize, log: log, locks: map[string]*sync.Mutex{}, nsLocations: nsLocations,
		keys: upsertsink.NewKeeper(log)}
}

func (s *Sink) lock(key string) func() {
	s.mu.Lock()
	l, ok := s.locks[key]
	if !ok {
		l = &sync.Mutex{}
		s.locks[key] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// DLQIdent is the identifier of a table's dead-letter table
// (sink.DLQIdent, the name every format gives it).
func DLQIdent(ident []string) []string { return sink.DLQIdent(ident) }

// Shape implements worker.Sink.
func (s *Sink) Shape(ctx context.Context, t sink.TableSpec) (*records.Shape, error) {
	tbl, err := s.cat.LoadTable(ctx, t.Ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading table %s: %w", ledger.DisplayName(t.Key), err)
	}
	shape, err := shapeOf(tbl.Schema(), t.Format)
	if err != nil {
		return nil, err
	}
	if id, err := strconv.Atoi(tbl.Properties()[PropSchemaID]); err == nil {
		shape.SchemaID, shape.CommittedSchemaID = id, id
	}
	return shape, nil
}

// PropSchemaID is the table property holding the highest registry schema
// id the table follows (see worker's evolve: lower ids are older writers).
const PropSchemaID = "floe.schema-id"

// Prepare implements worker.Sink: it creates the table on first data, adds
// the shape's new columns (nested ones included) as optional columns, and
// evolves the partition spec to the mapping's. It is a pipeline's: its
// commits are plain compare-and-swaps, ordered by the catalog.
func (s *Sink) Prepare(ctx context.Context, t sink.TableSpec, shape *records.Shape) error {
	return s.prepare(ctx, t, shape, nil)
}

// EvolveSchema implements worker.Sink: Prepare made by the table's
// committer, for a schema request. Every commit it makes is fenced by
// committer, so a node that lost the role cannot change the columns behind
// its successor's back.
func (s *Sink) EvolveSchema(ctx context.Context, t sink.TableSpec, shape *records.Shape, committer ledger.Assignment, at time.Time) error {
	return s.prepare(ctx, t, shape, s.bindMaintenance(t.Key, committer, at))
}

// prepare is Prepare, committing through bound when it is not nil.
func (s *Sink) prepare(ctx context.Context, t sink.TableSpec, shape *records.Shape, bound table.CatalogIO) error {
	defer s.lock(t.Key)()
	tbl, err := s.ensureTable(ctx, t.Ident, func() (*iceberg.Schema, error) { return tableSchema(t.Format, shape) })
	if err != nil {
		return err
	}
	if bound != nil {
		// Creating the table is no commit of it; what follows is.
		if tbl, err = bound.LoadTable(ctx, t.Ident); err != nil {
			return fmt.Errorf("loading table %s: %w", ledger.DisplayName(t.Key), err)
		}
	}
	if t.Format != "raw" && shape != nil && shape.HasUncommitted() {
		want, err := tableSchema(t.Format, shape)
		if err != nil {
			return err
		}
		// UnionByNameWith adds missing columns (fresh ids; existing ones keep
		// theirs, so ids are stable across evolution), promotes int to long,
		// float to double and widens decimal precision, and never drops a
		// column: a field the new schema removed keeps reading null.
		tx := tbl.NewTransaction()
		var opts []table.UpdateSchemaOption
		if nm := tbl.NameMapping(); nm != nil {
			// The first append set schema.name-mapping.default from the
			// schema of that day; keep it following the schema, or readers
			// of files without field ids would miss the new columns.
			opts = append(opts, table.WithNameMapping(nm))
		}
		if err := tx.UpdateSchema(true, false, opts...).UnionByNameWith(want).Commit(); err != nil {
			return fmt.Errorf("evolving schema of %s to %s: %w", ledger.DisplayName(t.Key), shape, err)
		}
		if have, _ := strconv.Atoi(tbl.Properties()[PropSchemaID]); shape.SchemaID > have {
			if err := tx.SetProperties(iceberg.Properties{PropSchemaID: strconv.Itoa(shape.SchemaID)}); err != nil {
				return fmt.Errorf("recording schema id %d of %s: %w", shape.SchemaID, ledger.DisplayName(t.Key), err)
			}
		}
		if tbl, err = tx.Commit(ctx); err != nil {
			return fmt.Errorf("committing schema of %s: %w", ledger.DisplayName(t.Key), err)
		}
	}
	if tbl, err = s.setMode(ctx, tbl, t); err != nil { // upsert.go
		return err
	}
	return s.evolveSpec(ctx, tbl, t)
}

// evolveSpec makes the table's partition spec the mapping's. Fields on
// columns the table does not have yet wait until the column appears; new
// data takes the new spec while old files keep theirs.
func (s *Sink) evolveSpec(ctx context.Context, tbl *table.Table, t sink.TableSpec) error {
	name := ledger.DisplayName(t.Key)
	sc := tbl.Schema()
	type pf struct {
		col string
		tr  iceberg.Transform
	}
	var want []pf
	for _, f := range t.PartitionBy {
		col, ok := sc.FindFieldByName(f.Column)
		if !ok {
			continue // a payload field not seen yet
		}
		tr, err := iceberg.ParseTransform(f.Transform)
		if err != nil {
			return fmt.Errorf("%w: partition_by %s(%s) of %s: %v", sink.ErrConfig, f.Transform, f.Column, name, err)
		}
		if !tr.CanTransform(col.Type) {
			return fmt.Errorf("%w: partition_by %s(%s) of %s: column %s is %s, which %s cannot partition",
				sink.ErrConfig, f.Transform, f.Column, name, f.Column, col.Type, tr)
		}
		want = append(want, pf{col: f.Column, tr: tr})
	}
	spec := tbl.Spec()
	var have []pf
	haveNames := map[string]string{}
	for _, f := range spec.Fields() {
		col, _ := sc.FindColumnName(f.SourceID())
		have = append(have, pf{col: col, tr: f.Transform})
		haveNames[col+"/"+f.Transform.String()] = f.Name
	}
	same := len(have) == len(want)
	for i := 0; same && i < len(want); i++ {
		same = have[i].col == want[i].col && have[i].tr.String() == want[i].tr.String()
	}
	if same {
		return nil
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.col+"/"+w.tr.String()] = true
	}
	tx := tbl.NewTransaction()
	us := tx.UpdateSpec(true)
	for _, h := range have {
		if key := h.col + "/" + h.tr.String(); !wanted[key] {
			us.RemoveField(haveNames[key])
		}
	}
	for _, w := range want {
		if _, ok := haveNames[w.col+"/"+w.tr.String()]; !ok {
			us.AddField(w.col, w.tr, "")
		}
	}
	if err := us.Commit(); err != nil {
		return fmt.Errorf("%w: evolving the partition spec of %s: %v", sink.ErrConfig, name, err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing the partition spec of %s: %w", name, err)
	}
	s.log.Info("partition spec evolved", "table", name, "fields", len(want))
	return nil
}

// ensureTable loads a table, creating it (and its namespace) when missing.
func (s *Sink) ensureTable(ctx context.Context, ident []string, schema func() (*iceberg.Schema, error)) (*table.Table, error) {
	name := ledger.DisplayName(ledger.TableKey(ident))
	tbl, err := s.cat.LoadTable(ctx, ident)
	if err == nil {
		return tbl, nil
	}
	if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("loading table %s: %w", name, err)
	}
	var props iceberg.Properties
	if loc := s.nsLocations[strings.Join(ident[:len(ident)-1], ".")]; loc != "" {
		props = iceberg.Properties{"location": loc}
	}
	if err := s.cat.EnsureNamespace(ctx, ident[:len(ident)-1], props); err != nil {
		return nil, fmt.Errorf("creating namespace of %s: %w", name, err)
	}
	sc, err := schema()
	if err != nil {
		return nil, err
	}
	tbl, err = s.cat.CreateTable(ctx, ident, sc, catalog.WithProperties(iceberg.Properties{
		table.MetadataDeleteAfterCommitEnabledKey: "true",
		table.MetadataPreviousVersionsMaxKey:      keptMetadataFiles,
		// Appends merge manifests once 100 accumulate, so planning cost
		// stays bounded however many commits a table takes.
		table.ManifestMergeEnabledKey: "true",
		// zstd at level 1 rather than iceberg-go's default (3): files no
		// larger, 8% fewer bytes allocated and write CPU lower or equal
		// (docs/benchmarks.md, "Parquet settings"). Set on new tables only:
		// an existing table's properties are its owner's, and every write
		// reads them.
		table.ParquetCompressionKey:      "zstd",
		table.ParquetCompressionLevelKey: "1",
		// Every commit rewrites the metadata file with every retained
		// snapshot: gzip makes it ~8x smaller, which is most of what a
		// quiet table writes (docs/benchmarks.md, "Many quiet tables").
		// Every reader in the interop matrix (Iceberg Java, Spark, Trino,
		// PyIceberg, DuckDB, Polars) reads the spec's .gz.metadata.json;
		// the catalog writes plain JSON while an older member remains.
		table.MetadataCompressionKey: table.MetadataCompressionCodecGzip,
	}))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return s.cat.LoadTable(ctx, ident)
	}
	if err != nil {
		return nil, fmt.Errorf("creating table %s: %w", name, err)
	}
	s.log.Info("created table", "table", name)
	return tbl, nil
}

// Write implements worker.Sink.
func (s *Sink) Write(ctx context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error) {
	tbl, err := s.ensureTable(ctx, t.Ident, func() (*iceberg.Schema, error) { return tableSchema(t.Format, nil) })
	if err != nil {
		return nil, err
	}
	return s.write(ctx, tbl, id, recs, false)
}

// WriteDLQ implements worker.Sink.
func (s *Sink) WriteDLQ(ctx context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error) {
	tbl, err := s.ensureTable(ctx, DLQIdent(t.Ident), func() (*iceberg.Schema, error) { return dlqSchema(), nil })
	if err != nil {
		return nil, err
	}
	return s.write(ctx, tbl, id, recs, true)
}

func (s *Sink) write(ctx context.Context, tbl *table.Table, id string, recs []*records.Record, dlq bool) ([]ledger.FileDescriptor, error) {
	name := ledger.DisplayName(ledger.TableKey(tbl.Identifier()))
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema of %s: %w", name, err)
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, fmt.Errorf("write id %q: %w", id, err)
	}
	if k := fileParts(len(recs), tbl.Spec().IsUnpartitioned(), runtime.GOMAXPROCS(0)); k > 1 {
		return s.writeParts(ctx, tbl, as, u, name, recs, dlq, k) // writeparts.go
	}
	return s.writeFiles(ctx, tbl, as, u, name, recs, dlq)
}

// writeFiles encodes recs into data files of tbl named after the write id
// u, one unless they pass the target file size.
func (s *Sink) writeFiles(ctx context.Context, tbl *table.Table, as *arrow.Schema, u uuid.UUID, name string, recs []*records.Record, dlq bool) ([]ledger.FileDescriptor, error) {
	batches := recordBatches(tbl.Schema(), as, recs, dlq)
	var out []ledger.FileDescriptor
	// A partition directory iceberg-go would name too long for a file
	// system or an S3 key is written and recorded shorter (partpath.go).
	files := table.WriteRecords(ctx, shortNamed(tbl), as, iter.Seq2[arrow.RecordBatch, error](batches),
		table.WithTargetFileSize(s.targetSize), table.WithWriteUUID(u))
	for df, err := range files {
		if err != nil {
			return nil, fmt.Errorf("writing data file of %s: %w", name, err)
		}
		out = append(out, shortDescriptor(tbl.Location(), df))
	}
	return out, nil
}
