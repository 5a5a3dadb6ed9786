package backend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/proto/admin"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// TableLayout implements admin.Backend: the table's current schema with
// when each field appeared, its partition spec, the mapping that routes
// into it and this node's catalog URL.
func (b *Backend) TableLayout(ctx context.Context, name string) (admin.TableLayout, error) {
	if err := b.ready(); err != nil {
		return admin.TableLayout{}, err
	}
	key, err := b.tableKey(name)
	if err != nil {
		return admin.TableLayout{}, err
	}
	tbl, err := b.catalog.LoadTable(ctx, ledger.TableIdent(key))
	if err != nil {
		return admin.TableLayout{}, fmt.Errorf("%w: table %s has no data yet: %w", admin.ErrNotFound, name, err)
	}
	ident := ledger.TableIdent(key)
	out := admin.TableLayout{Location: tbl.Location(), MetadataLocation: tbl.MetadataLocation(),
		Namespace: ident[0], Name: ident[len(ident)-1], CatalogURL: b.catalogURI}
	if len(ident) > 2 {
		out.Namespace = fmt.Sprint(ident[:len(ident)-1])
	}
	meta := tbl.Metadata()
	out.FormatVersion = meta.Version()
	if s := tbl.CurrentSnapshot(); s != nil {
		out.CurrentSnapshot = s.SnapshotID
	}
	out.Fields, err = layoutFields(meta)
	if err != nil {
		return admin.TableLayout{}, fmt.Errorf("reading the schema of %s: %w", name, err)
	}
	cur := meta.CurrentSchema()
	out.SchemaID = cur.ID
	spec := meta.PartitionSpec()
	for _, f := range spec.Fields() {
		src, _ := cur.FindColumnName(f.SourceID())
		out.Spec = append(out.Spec, admin.SpecField{Name: f.Name, Source: src, Transform: f.Transform.String()})
	}
	if m, ok := b.worker.Mapping(key); ok {
		out.Mapping = &m
	}
	return out, nil
}

// layoutFields lists the current schema's fields, each with the first
// schema that had it and the oldest retained snapshot written with such a
// schema.
func layoutFields(meta table.Metadata) ([]admin.FieldInfo, error) {
	schemas := slices.Clone(meta.Schemas())
	slices.SortFunc(schemas, func(a, b *iceberg.Schema) int { return a.ID - b.ID })
	firstSchema := map[int]int{} // field id -> schema id
	for _, s := range schemas {
		flat, err := s.FlatFields()
		if err != nil {
			return nil, err
		}
		for f := range flat {
			if _, ok := firstSchema[f.ID]; !ok {
				firstSchema[f.ID] = s.ID
			}
		}
	}
	// The oldest retained snapshot per schema id, and so the first time a
	// snapshot was written with a schema at least as new.
	var snaps []table.Snapshot
	snaps = append(snaps, meta.Snapshots()...)
	slices.SortFunc(snaps, func(a, b table.Snapshot) int { return cmp.Compare(a.TimestampMs, b.TimestampMs) })
	since := func(schemaID int) time.Time {
		for _, s := range snaps {
			if s.SchemaID != nil && *s.SchemaID >= schemaID {
				return time.UnixMilli(s.TimestampMs)
			}
		}
		return time.Time{}
	}
	cur := meta.CurrentSchema()
	flat, err := cur.FlatFields()
	if err != nil {
		return nil, err
	}
	var out []admin.FieldInfo
	for f := range flat {
		name, _ := cur.FindColumnName(f.ID)
		first := firstSchema[f.ID]
		out = append(out, admin.FieldInfo{ID: f.ID, Name: name, Type: f.Type.String(), Required: f.Required,
			SinceSchema: first, Since: since(first)})
	}
	slices.SortFunc(out, func(a, b admin.FieldInfo) int { return a.ID - b.ID })
	return out, nil
}

// DeadLetters implements admin.Backend: the newest rows of the table's
// dead-letter table (sinks/iceberg.LatestDeadLetters), none when it has
// none yet.
func (b *Backend) DeadLetters(ctx context.Context, name string, limit int) ([]admin.DeadLetter, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	key, err := b.tableKey(name)
	if err != nil {
		return nil, err
	}
	tbl, err := b.catalog.LoadTable(ctx, ledger.TableIdent(fsm.DLQKey(key)))
	switch {
	case errors.Is(err, icebergcatalog.ErrNoSuchTable):
		return nil, nil // no dead letter committed yet
	case err != nil:
		return nil, fmt.Errorf("loading the dead-letter table of %s: %w", name, err)
	}
	rows, err := icebergsink.LatestDeadLetters(ctx, tbl, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the dead letters of %s: %w", name, err)
	}
	out := make([]admin.DeadLetter, 0, len(rows))
	for _, r := range rows {
		out = append(out, admin.DeadLetter{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
			Error: r.Error, Value: r.Value, ValueBytes: r.ValueBytes})
	}
	return out, nil
}
