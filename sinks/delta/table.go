package delta

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
)

// Table is what the Delta log needs to know of the table: where its root
// is, its stable id and its columns as Iceberg describes them. The
// committer builds it from the table's Iceberg metadata (Location,
// TableUUID, CurrentSchema, PartitionSpecs, DefaultPartitionSpec).
type Table struct {
	Location string                  // table root: file:///..., /... or s3://bucket/...
	ID       string                  // stable id: metaData.id and the txn appId
	Name     string                  // metaData.name (namespace.table)
	Schema   *iceberg.Schema         // the current schema
	Schemas  []*iceberg.Schema       // every schema the table had: the type history of a log's first version
	Specs    []iceberg.PartitionSpec // every spec a file may name (by SpecID)
	SpecID   int                     // the current spec: its identity fields partition the Delta table
	// DeletionVectors: the table deletes rows of its files (an upsert
	// table's position deletes), which its log expresses as deletion
	// vectors; the protocol then includes the deletionVectors feature.
	DeletionVectors bool
}

// TableOf describes an Iceberg table's current metadata for its Delta log:
// the same root, the table UUID as the stable id, the current schema (and
// the older ones) and every partition spec (old files keep theirs).
func TableOf(meta table.Metadata, name string) Table {
	return Table{Location: meta.Location(), ID: meta.TableUUID().String(), Name: name,
		Schema: meta.CurrentSchema(), Schemas: meta.Schemas(), Specs: meta.PartitionSpecs(), SpecID: meta.DefaultPartitionSpec()}
}

// partCol is a Delta partition column: an Iceberg identity partition field
// on a top-level column.
type partCol struct {
	name    string
	fieldID int // the partition field's id (the key of PartValues)
	typ     iceberg.Type
}

// partitionColumns lists a spec's Delta partition columns. Other
// transforms (bucket, truncate, year, month, day, hour), identity on a
// nested column and identity on binary, uuid or fixed columns are not
// Delta partitions: the table stays unpartitioned in them and readers skip
// files by the source column's statistics (docs/formats.md).
func partitionColumns(sc *iceberg.Schema, spec iceberg.PartitionSpec) []partCol {
	top := map[int]iceberg.NestedField{}
	for _, f := range sc.Fields() {
		top[f.ID] = f
	}
	var out []partCol
	for _, f := range spec.Fields() {
		src, ok := top[f.SourceID()]
		if !ok || f.Transform.String() != "identity" {
			continue
		}
		switch src.Type.(type) {
		case iceberg.BinaryType, iceberg.UUIDType, iceberg.FixedType, iceberg.TimeType:
			continue
		}
		out = append(out, partCol{name: src.Name, fieldID: f.FieldID, typ: src.Type})
	}
	return out
}

func (t *Table) spec(id int) (iceberg.PartitionSpec, error) {
	for _, s := range t.Specs {
		if s.ID() == id {
			return s, nil
		}
	}
	return iceberg.PartitionSpec{}, fmt.Errorf("%w: table %s has no partition spec %d", ErrInvalidCommit, t.Name, id)
}

// File is a data file entering the table: its descriptor and when it was
// written (unix ms; zero means the commit's time).
type File struct {
	ledger.FileDescriptor
	WrittenAt int64
}

// relPath makes a data file's path relative to the table root, as a URI
// path (each segment escaped). A file outside the root is refused: Floe
// writes every data file under <location>/data.
func relPath(location, path string) (string, error) {
	root := strings.TrimSuffix(canonical(location), "/") + "/"
	p := canonical(path)
	rel, ok := strings.CutPrefix(p, root)
	if !ok || rel == "" {
		return "", fmt.Errorf("%w: data file %s is not under the table root %s", ErrInvalidCommit, path, location)
	}
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return "", fmt.Errorf("%w: data file %s has an empty or relative path segment", ErrInvalidCommit, path)
		}
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/"), nil
}

// canonical strips the file:// scheme, which local paths may or may not
// carry.
func canonical(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return p
}

// partitionValues renders a file's Delta partition values from its
// descriptor: exact from PartValues (Iceberg's binary form), else from the
// JSON form an older node wrote (strings, booleans and integers only).
func partitionValues(cols []partCol, d ledger.FileDescriptor) (NullableMap, error) {
	out := make(NullableMap, len(cols))
	for _, c := range cols {
		var v any
		if b, ok := d.PartValues[c.fieldID]; ok {
			if b == nil {
				out[c.name] = nil
				continue
			}
			lit, err := promotedLiteral(c.typ, b)
			if err != nil {
				return nil, fmt.Errorf("%w: partition value of %s in %s: %v", ErrInvalidCommit, c.name, d.Path, err)
			}
			v = lit.Any()
		} else if jv, ok := d.Partition[c.fieldID]; ok {
			var err error
			if v, err = legacyValue(c.typ, jv); err != nil {
				return nil, fmt.Errorf("%w: partition value of %s in %s: %v", ErrInvalidCommit, c.name, d.Path, err)
			}
		} else {
			return nil, fmt.Errorf("%w: data file %s has no value for partition column %s", ErrInvalidCommit, d.Path, c.name)
		}
		if v == nil {
			out[c.name] = nil
			continue
		}
		s, err := partitionString(c.typ, v)
		if err != nil {
			return nil, fmt.Errorf("%w: partition value of %s in %s: %v", ErrUnsupported, c.name, d.Path, err)
		}
		out[c.name] = &s
	}
	return out, nil
}

// legacyValue reads a partition value of the JSON form (float64 numbers).
func legacyValue(typ iceberg.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ.(type) {
	case iceberg.StringType:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case iceberg.BooleanType:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType:
		var n float64
		switch x := v.(type) {
		case float64:
			n = x
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return nil, err
			}
			n = f
		default:
			return nil, fmt.Errorf("%v (%T) is not a number", v, v)
		}
		if n != float64(int64(n)) || n > 1<<53 || n < -(1<<53) {
			return nil, fmt.Errorf("%v is not an exact integer", n)
		}
		if _, ok := typ.(iceberg.DateType); ok {
			return iceberg.Date(int32(n)), nil
		}
		return int64(n), nil
	}
	return nil, fmt.Errorf("%v (%T) of an older node cannot be read exactly as %s", v, v, typ)
}

// partitionString serializes a partition value ("Partition Value
// Serialization"): timestamps with zone as ISO 8601 in UTC, without zone
// as "yyyy-mm-dd hh:mm:ss.ffffff".
func partitionString(typ iceberg.Type, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case iceberg.Decimal:
		return x.String(), nil
	case iceberg.Date:
		return dateString(int32(x)), nil
	case iceberg.Timestamp:
		if _, ok := typ.(iceberg.TimestampTzType); ok {
			return microsTime(int64(x)).Format("2006-01-02T15:04:05.000000Z"), nil
		}
		return microsTime(int64(x)).Format("2006-01-02 15:04:05.000000"), nil
	}
	return "", fmt.Errorf("a %T partition value has no Delta serialization", v)
}

// sameColumns reports whether two partition column lists name the same
// columns in the same order.
func sameColumns(cols []partCol, names []string) bool {
	have := make([]string, len(cols))
	for i, c := range cols {
		have[i] = c.name
	}
	return slices.Equal(have, names)
}
