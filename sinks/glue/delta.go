package glue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/floe-io/floe/sinks/sink"
)

// DeltaSuffix is appended to a table's name for its Glue Delta entry: one
// Glue table is either an Iceberg table (table_type=ICEBERG, read through
// metadata_location) or a Delta table (table_type=DELTA, read through the
// _delta_log under its location), never both, so a table written in both
// formats gets two entries in its database: <table> and <table>_delta.
const DeltaSuffix = "_delta"

// DeltaSyncer registers the Delta view of tables whose formats name delta,
// the way Athena's CREATE EXTERNAL TABLE ... TBLPROPERTIES
// ('table_type'='DELTA') and Glue crawlers' native Delta tables register
// them. It shares the Iceberg Syncer's client and configuration and is a
// catalog of its own (Name "glue-delta"), so its sync state and lag are
// recorded and shown apart from the Iceberg entry's.
type DeltaSyncer struct{ s *Syncer }

// Delta returns the syncer of the Delta entries beside s's Iceberg ones.
func (s *Syncer) Delta() *DeltaSyncer { return &DeltaSyncer{s: s} }

// Name implements catalogsync.Catalog.
func (d *DeltaSyncer) Name() string { return "glue-delta" }

// Format implements catalogsync.FormatCatalog: only tables that write a
// Delta log are registered as Delta tables.
func (d *DeltaSyncer) Format() string { return "delta" }

// Sync implements catalogsync.Catalog: create or overwrite the table's
// Delta entry. Its location is the table's root (the Delta log is
// <location>/_delta_log) and its columns the table's schema at
// t.MetadataLocation, which is the schema the same commit gave the Delta
// log. An existing entry of that name that is not a Delta table (say an
// Iceberg table named <table>_delta) is never overwritten.
func (d *DeltaSyncer) Sync(ctx context.Context, t sink.SyncTable) error {
	s := d.s
	name := strings.Join(t.Ident, ".")
	db, glueName, err := s.glueNames(t.Ident, DeltaSuffix)
	if err != nil {
		return fmt.Errorf("syncing %s's delta entry to glue: %w", name, err)
	}
	tbl, err := table.NewFromLocation(ctx, t.Ident, t.MetadataLocation, icebergio.LoadFSFunc(s.cfg.IOProps, t.MetadataLocation), nil)
	if err != nil {
		return fmt.Errorf("syncing %s's delta entry to glue: %w: %w", name, ErrMetadata, err)
	}
	cols, err := deltaColumns(tbl.Schema())
	if err != nil {
		return fmt.Errorf("syncing %s's delta entry to glue: %w", name, err)
	}
	if err := s.ensureDatabase(ctx, db, t.Ident[:len(t.Ident)-1]); err != nil {
		return fmt.Errorf("syncing %s's delta entry to glue: %w", name, err)
	}
	in := deltaTableInput(glueName, tbl.Location(), cols)
	if err := d.put(ctx, db, in); err != nil {
		return fmt.Errorf("syncing %s's delta entry to glue: %w", name, err)
	}
	return nil
}

// put creates the entry or updates it when it differs from in.
func (d *DeltaSyncer) put(ctx context.Context, db string, in *gluetypes.TableInput) error {
	s := d.s
	got, err := s.getOrCreate(ctx, db, in)
	if err != nil {
		return err
	}
	if got == nil {
		s.log.Info("created glue delta table", "glue", db+"."+*in.Name, "location", *in.StorageDescriptor.Location)
		return nil
	}
	if tt := got.Table.Parameters["table_type"]; !strings.EqualFold(tt, "DELTA") {
		return fmt.Errorf("%s.%s is a %q table: %w", db, *in.Name, tt, ErrNameTaken)
	}
	if sameEntry(got.Table, in) {
		return nil // a commit without schema change: the entry needs no new Glue version
	}
	_, err = s.client.UpdateTable(ctx, &glue.UpdateTableInput{
		CatalogId: s.catalogID(), DatabaseName: aws.String(db), TableInput: in,
		VersionId: got.Table.VersionId, SkipArchive: aws.Bool(s.cfg.SkipArchive),
	})
	var cm *gluetypes.ConcurrentModificationException
	if errors.As(err, &cm) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("updating %s.%s: %w", db, *in.Name, err)
	}
	return nil
}

// deltaTableInput is a native Delta table entry: EXTERNAL_TABLE with
// table_type=DELTA (what Athena requires), spark.sql.sources.provider=delta
// (how Spark's and Trino's Glue clients recognise a Delta table) and
// classification=delta (what Glue's crawler sets), the table root as the
// location and, for Spark's data source tables, as the SerDe's path.
func deltaTableInput(name, location string, cols []gluetypes.Column) *gluetypes.TableInput {
	return &gluetypes.TableInput{
		Name:        aws.String(name),
		TableType:   aws.String("EXTERNAL_TABLE"),
		Description: aws.String("The Delta Lake view of a Floe table, mirrored from its catalog of record; changes made here are overwritten at the next sync."),
		Parameters: map[string]string{
			"table_type":                 "DELTA",
			"spark.sql.sources.provider": "delta",
			"classification":             "delta",
			"EXTERNAL":                   "TRUE",
		},
		StorageDescriptor: &gluetypes.StorageDescriptor{
			Location:  aws.String(location),
			Columns:   cols,
			SerdeInfo: &gluetypes.SerDeInfo{Parameters: map[string]string{"path": location}},
		},
	}
}

// sameEntry reports whether the Glue entry already holds what in says.
func sameEntry(got *gluetypes.Table, in *gluetypes.TableInput) bool {
	if got.StorageDescriptor == nil || aws.ToString(got.TableType) != aws.ToString(in.TableType) ||
		aws.ToString(got.StorageDescriptor.Location) != aws.ToString(in.StorageDescriptor.Location) ||
		!maps.Equal(got.Parameters, in.Parameters) {
		return false
	}
	return slices.EqualFunc(got.StorageDescriptor.Columns, in.StorageDescriptor.Columns, func(a, b gluetypes.Column) bool {
		return aws.ToString(a.Name) == aws.ToString(b.Name) && aws.ToString(a.Type) == aws.ToString(b.Type) &&
			aws.ToString(a.Comment) == aws.ToString(b.Comment)
	})
}

// deltaColumns lists a schema's top-level fields with the Hive type of
// their Delta type (docs/formats.md, "Type mapping (Iceberg to Delta)"):
// uuid and fixed are binary in Delta, a time column has no Delta type.
// No iceberg.field.* parameters: a Delta reader matches columns by name.
func deltaColumns(sc *iceberg.Schema) ([]gluetypes.Column, error) {
	out := make([]gluetypes.Column, 0, len(sc.Fields()))
	for _, f := range sc.Fields() {
		typ, err := deltaGlueType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		c := gluetypes.Column{Name: aws.String(f.Name), Type: aws.String(typ)}
		if f.Doc != "" {
			c.Comment = aws.String(f.Doc)
		}
		out = append(out, c)
	}
	return out, nil
}

// deltaGlueType is glueType for a Delta column: the same Hive names except
// where Delta's type differs from Iceberg's.
func deltaGlueType(t iceberg.Type) (string, error) {
	switch t := t.(type) {
	case iceberg.UUIDType, iceberg.FixedType:
		return "binary", nil
	case iceberg.TimeType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return "", fmt.Errorf("%s has no Delta type: %w", t, ErrNoDeltaType)
	case *iceberg.StructType:
		parts := make([]string, 0, len(t.FieldList))
		for _, f := range t.FieldList {
			s, err := deltaGlueType(f.Type)
			if err != nil {
				return "", err
			}
			parts = append(parts, f.Name+":"+s)
		}
		return "struct<" + strings.Join(parts, ",") + ">", nil
	case *iceberg.ListType:
		e, err := deltaGlueType(t.Element)
		return "array<" + e + ">", err
	case *iceberg.MapType:
		k, err := deltaGlueType(t.KeyType)
		if err != nil {
			return "", err
		}
		v, err := deltaGlueType(t.ValueType)
		return "map<" + k + "," + v + ">", err
	}
	return glueType(t), nil
}
