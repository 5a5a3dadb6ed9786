package delta

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/ledger"
)

// Per-file statistics ("Per-file Statistics") from an Iceberg descriptor:
// numRecords, and per column nullCount, minValues and maxValues mirroring
// the schema's struct nesting. Columns inside lists and maps have no
// entry (Iceberg keeps their bounds by element id, Delta has no place for
// them), nor do partition columns (their values are in partitionValues).
// Bounds are written only for types whose Delta JSON form is ordered like
// the value: numbers, decimals, dates, timestamps and strings. Iceberg's
// string bounds may be truncated (a shorter lower bound, an incremented
// upper bound): both remain valid bounds, as Delta's own truncated string
// statistics are. Timestamps are written at millisecond precision, the
// minimum rounded down and the maximum up, so every reader may trust them
// whether or not it widens them itself.

type fileStats struct {
	NumRecords int64          `json:"numRecords"`
	MinValues  map[string]any `json:"minValues,omitempty"`
	MaxValues  map[string]any `json:"maxValues,omitempty"`
	NullCount  map[string]any `json:"nullCount,omitempty"`
}

// statsJSON renders a file's statistics as the add action's stats string.
func statsJSON(sc *iceberg.Schema, skip map[string]bool, d ledger.FileDescriptor) (string, error) {
	st := fileStats{NumRecords: d.RecordCount}
	var err error
	st.MinValues, st.MaxValues, st.NullCount, err = structStats(sc.Fields(), skip, d)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("encoding statistics of %s: %w", d.Path, err)
	}
	return string(b), nil
}

func structStats(fields []iceberg.NestedField, skip map[string]bool, d ledger.FileDescriptor) (mins, maxs, nulls map[string]any, err error) {
	mins, maxs, nulls = map[string]any{}, map[string]any{}, map[string]any{}
	for _, f := range fields {
		if skip[f.Name] || omitted(f.Type) {
			continue
		}
		if st, ok := f.Type.(*iceberg.StructType); ok {
			lo, hi, nc, err := structStats(st.FieldList, nil, d)
			if err != nil {
				return nil, nil, nil, err
			}
			putNonEmpty(mins, f.Name, lo)
			putNonEmpty(maxs, f.Name, hi)
			putNonEmpty(nulls, f.Name, nc)
			continue
		}
		switch f.Type.(type) {
		case *iceberg.ListType, *iceberg.MapType:
			continue
		}
		if n, ok := d.NullCounts[f.ID]; ok {
			nulls[f.Name] = n
		}
		lo, okLo, err := bound(f, d.LowerBounds[f.ID], false)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: lower bound of %s in %s: %v", ErrInvalidCommit, f.Name, d.Path, err)
		}
		hi, okHi, err := bound(f, d.UpperBounds[f.ID], true)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: upper bound of %s in %s: %v", ErrInvalidCommit, f.Name, d.Path, err)
		}
		if okLo && okHi {
			mins[f.Name], maxs[f.Name] = lo, hi
		}
	}
	return mins, maxs, nulls, nil
}

func putNonEmpty(m map[string]any, k string, v map[string]any) {
	if len(v) > 0 {
		m[k] = v
	}
}

// bound decodes one Iceberg bound into its Delta statistics value; ok is
// false for a missing bound or a type Delta keeps no bounds of.
func bound(f iceberg.NestedField, b []byte, upper bool) (any, bool, error) {
	if b == nil {
		return nil, false, nil
	}
	switch f.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.Float32Type, iceberg.Float64Type, iceberg.DecimalType,
		iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType, iceberg.StringType:
	default:
		return nil, false, nil
	}
	lit, err := promotedLiteral(f.Type, b)
	if err != nil {
		return nil, false, err
	}
	switch x := lit.Any().(type) {
	case int32, int64, string:
		return x, true, nil
	case float32:
		return finite(float64(x))
	case float64:
		return finite(x)
	case iceberg.Decimal:
		return json.Number(x.String()), true, nil
	case iceberg.Date:
		return dateString(int32(x)), true, nil
	case iceberg.Timestamp:
		ms := floorDiv(int64(x), 1000)
		if upper && int64(x)%1000 != 0 {
			ms++
		}
		t := time.UnixMilli(ms).UTC()
		if _, ok := f.Type.(iceberg.TimestampTzType); ok {
			return t.Format("2006-01-02T15:04:05.000Z"), true, nil
		}
		return t.Format("2006-01-02T15:04:05.000"), true, nil
	}
	return nil, false, nil
}

func finite(f float64) (any, bool, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false, nil
	}
	return f, true, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func dateString(days int32) string {
	return time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02")
}

func microsTime(us int64) time.Time { return time.UnixMicro(us).UTC() }
