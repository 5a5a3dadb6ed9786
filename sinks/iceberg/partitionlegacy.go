package iceberg

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/ledger"
)

// ErrInexactPartition: an entry recorded by a node of a build before exact
// partition values (ledger.FileDescriptor.PartValues) carries a partition
// value JSON does not hold exactly (a long above 2^53, a decimal), and its
// file's column bounds cannot restore it. Committing it would put the file
// in the wrong partition, so the commit is refused and says why.
var ErrInexactPartition = errors.New("partition value not held exactly by an older node's entry")

// exactLegacy reports whether a partition value of typ that came back from
// JSON as v is the value that was written: booleans, strings, 32-bit
// integers and dates always; longs and timestamps up to 2^53; doubles
// (encoding/json writes the shortest form that reads back the same).
func exactLegacy(typ iceberg.Type, v any) bool {
	switch typ.(type) {
	case iceberg.BooleanType, iceberg.StringType, iceberg.Int32Type, iceberg.DateType, iceberg.Float64Type:
		return true
	case iceberg.Int64Type, iceberg.TimestampType, iceberg.TimestampTzType:
		f, ok := v.(float64)
		return ok && math.Abs(f) <= 1<<53
	}
	return false
}

// mustBeExact reports whether a value of typ that JSON did not hold exactly
// would be committed wrong (rather than refused by iceberg-go as a value
// of the wrong Go type).
func mustBeExact(typ iceberg.Type) bool {
	switch typ.(type) {
	case iceberg.Int64Type, iceberg.TimestampType, iceberg.TimestampTzType, iceberg.DecimalType:
		return true
	}
	return false
}

// legacyPartition restores partition field f (of spec field pf) of an older
// node's entry: from the JSON value where JSON held it exactly; else from
// the data file's bounds on the source column, which are exact (Iceberg's
// binary form) and, every row of the file having the same partition, give
// the value as the transform of either bound; else, for a type a wrong
// value would pass unseen, ErrInexactPartition.
func legacyPartition(schema *iceberg.Schema, f iceberg.NestedField, pf iceberg.PartitionField, d ledger.FileDescriptor) (any, error) {
	v := d.Partition[f.ID]
	if v == nil || exactLegacy(f.Type, v) {
		return legacyValue(f.Type, v)
	}
	if got, ok := fromBounds(schema, pf, d); ok {
		return got, nil
	}
	if mustBeExact(f.Type) {
		return nil, fmt.Errorf("%w: %v, and the file %s has no bounds on its source column that give one value; the node that recorded it runs a build before exact partition values: upgrade it",
			ErrInexactPartition, v, d.Path)
	}
	return legacyValue(f.Type, v)
}

// fromBounds is the partition value of pf as the transform of the file's
// lower and upper bounds on its source column, when both give the same one.
func fromBounds(schema *iceberg.Schema, pf iceberg.PartitionField, d ledger.FileDescriptor) (any, bool) {
	src, ok := schema.FindFieldByID(pf.SourceID())
	if !ok {
		return nil, false
	}
	lo, okLo := d.LowerBounds[pf.SourceID()]
	hi, okHi := d.UpperBounds[pf.SourceID()]
	if !okLo || !okHi {
		return nil, false
	}
	apply := func(b []byte) (iceberg.Literal, bool) {
		lit, err := iceberg.LiteralFromBytes(src.Type, b)
		if err != nil {
			return nil, false
		}
		out := pf.Transform.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: lit})
		return out.Val, out.Valid
	}
	a, okA := apply(lo)
	b, okB := apply(hi)
	if !okA || !okB || !a.Equals(b) {
		return nil, false // truncated bounds, or the file spans partitions
	}
	return a.Any(), true
}

// legacyJSON is the Partition a node of the build before exact values
// reads. A long or timestamp beyond 2^53 goes as a decimal string, not a
// number: that build would read a number back rounded and commit the file
// under a neighbouring partition value, while a string it refuses ("is not
// a number"), so its commit of the entry fails and is retried until a node
// of this build commits the table. Other values go as they are.
func legacyJSON(part map[int]any) map[int]any {
	if part == nil {
		return nil
	}
	out := make(map[int]any, len(part))
	for id, v := range part {
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case iceberg.Timestamp:
			n = int64(x)
		case iceberg.TimestampNano:
			n = int64(x)
		default:
			out[id] = v
			continue
		}
		if n > 1<<53 || n < -(1<<53) {
			out[id] = strconv.FormatInt(n, 10)
		} else {
			out[id] = v
		}
	}
	return out
}
