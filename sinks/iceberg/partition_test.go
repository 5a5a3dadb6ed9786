package iceberg

import (
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// partitionCase is one column type, a transform Floe offers
// (config.PartitionField: identity, year, month, day, hour, bucket[N],
// truncate[W]) and a source value; the partition value is the transform of
// the value, as iceberg-go's writer computes it.
type partitionCase struct {
	name    string
	typ     iceberg.Type
	tr      iceberg.Transform
	src     iceberg.Literal
	version string // table format version; "" is 2
}

// decimal3810 is a decimal(38,10) with all 38 digits.
func decimal3810(t testing.TB) iceberg.Literal {
	n, ok := new(big.Int).SetString("12345678901234567890123456789012345678", 10)
	if !ok {
		t.Fatal("bad decimal")
	}
	return iceberg.NewLiteral(iceberg.Decimal{Val: decimal128.FromBigInt(n), Scale: 10})
}

func partitionCases(t testing.TB) []partitionCase {
	id := iceberg.IdentityTransform{}
	ts := iceberg.Timestamp(time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC).UnixMicro())
	u := uuid.MustParse("0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11")
	return []partitionCase{
		{"boolean", iceberg.PrimitiveTypes.Bool, id, iceberg.NewLiteral(true), ""},
		{"int", iceberg.PrimitiveTypes.Int32, id, iceberg.NewLiteral(int32(-2147483648)), ""},
		{"long 2^60+1", iceberg.PrimitiveTypes.Int64, id, iceberg.NewLiteral(int64(1<<60 + 1)), ""},
		{"long max", iceberg.PrimitiveTypes.Int64, id, iceberg.NewLiteral(int64(9223372036854775807)), ""},
		{"float", iceberg.PrimitiveTypes.Float32, id, iceberg.NewLiteral(float32(3.1415927)), ""},
		{"double", iceberg.PrimitiveTypes.Float64, id, iceberg.NewLiteral(0.1 + 0.2), ""},
		{"decimal(38,10)", iceberg.DecimalTypeOf(38, 10), id, decimal3810(t), ""},
		{"date", iceberg.PrimitiveTypes.Date, id, iceberg.NewLiteral(iceberg.Date(20455)), ""},
		{"time", iceberg.PrimitiveTypes.Time, id, iceberg.NewLiteral(iceberg.Time(86399999999)), ""},
		{"timestamp", iceberg.PrimitiveTypes.Timestamp, id, iceberg.NewLiteral(ts), ""},
		{"timestamptz", iceberg.PrimitiveTypes.TimestampTz, id, iceberg.NewLiteral(ts), ""},
		{"timestamp_ns", iceberg.PrimitiveTypes.TimestampNs, id, iceberg.NewLiteral(iceberg.TimestampNano(1767323045678901234)), "3"},
		{"timestamptz_ns", iceberg.PrimitiveTypes.TimestampTzNs, id, iceberg.NewLiteral(iceberg.TimestampNano(1767323045678901234)), "3"},
		{"string", iceberg.PrimitiveTypes.String, id, iceberg.NewLiteral("eu-west-1 ✓"), ""},
		{"empty string", iceberg.PrimitiveTypes.String, id, iceberg.NewLiteral(""), ""},
		{"uuid", iceberg.PrimitiveTypes.UUID, id, iceberg.NewLiteral(u), ""},
		{"fixed", iceberg.FixedTypeOf(4), id, iceberg.FixedLiteral([]byte{0, 0xff, 1, 0x80}), ""},
		{"binary", iceberg.PrimitiveTypes.Binary, id, iceberg.NewLiteral([]byte{0, 0xff, 1, 0x80, 0}), ""},
		{"day(timestamp)", iceberg.PrimitiveTypes.Timestamp, iceberg.DayTransform{}, iceberg.NewLiteral(ts), ""},
		{"hour(timestamptz)", iceberg.PrimitiveTypes.TimestampTz, iceberg.HourTransform{}, iceberg.NewLiteral(ts), ""},
		{"month(date)", iceberg.PrimitiveTypes.Date, iceberg.MonthTransform{}, iceberg.NewLiteral(iceberg.Date(20455)), ""},
		{"year(timestamp)", iceberg.PrimitiveTypes.Timestamp, iceberg.YearTransform{}, iceberg.NewLiteral(ts), ""},
		{"bucket[16](long)", iceberg.PrimitiveTypes.Int64, iceberg.BucketTransform{NumBuckets: 16}, iceberg.NewLiteral(int64(1<<60 + 1)), ""},
		{"bucket[16](uuid)", iceberg.PrimitiveTypes.UUID, iceberg.BucketTransform{NumBuckets: 16}, iceberg.NewLiteral(u), ""},
		{"truncate[4](string)", iceberg.PrimitiveTypes.String, iceberg.TruncateTransform{Width: 4}, iceberg.NewLiteral("eu-west-1"), ""},
		{"truncate[10](long)", iceberg.PrimitiveTypes.Int64, iceberg.TruncateTransform{Width: 10}, iceberg.NewLiteral(int64(1<<60 + 1)), ""},
		{"truncate[100](decimal)", iceberg.DecimalTypeOf(38, 10), iceberg.TruncateTransform{Width: 100}, decimal3810(t), ""},
	}
}

// partitionedMeta returns the metadata of a table with one column of typ
// partitioned by tr, and its spec.
func partitionedMeta(t testing.TB, typ iceberg.Type, tr iceberg.Transform, version string) (table.Metadata, iceberg.PartitionSpec) {
	t.Helper()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: typ, Required: false})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "p", Transform: tr})
	props := iceberg.Properties{}
	if version != "" {
		props["format-version"] = version
	}
	meta, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, "file:///w/db/t", props)
	if err != nil {
		t.Fatal(err)
	}
	return meta, meta.PartitionSpec()
}

// throughRaft encodes a descriptor as a RecordFiles command would carry it
// and decodes it as the FSM does.
func throughRaft(t testing.TB, d ledger.FileDescriptor) ledger.FileDescriptor {
	t.Helper()
	data, err := fsm.Encode(fsm.RecordFiles{Table: "db\x1ft", Entry: ledger.Entry{ID: "e", Files: []ledger.FileDescriptor{d}}})
	if err != nil {
		t.Fatal(err)
	}
	var back fsm.RecordFiles
	if err := json.Unmarshal(data[1:], &back); err != nil {
		t.Fatal(err)
	}
	return back.Entry.Files[0]
}

// TestPartitionValuesRoundTrip: each partition value comes back, after the
// descriptor crossed Raft as JSON, as the same Go value of the partition
// field's type in the rebuilt data file.
func TestPartitionValuesRoundTrip(t *testing.T) {
	for _, tc := range partitionCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			meta, spec := partitionedMeta(t, tc.typ, tc.tr, tc.version)
			val := tc.tr.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: tc.src})
			if !val.Valid {
				t.Fatalf("transform %s gave no value", tc.tr)
			}
			want := map[int]any{1000: val.Val.Any()}
			b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "file:///w/db/t/data/f.parquet", iceberg.ParquetFile, want, nil, nil, 1, 10)
			if err != nil {
				t.Fatal(err)
			}
			d := throughRaft(t, describe(b.Build()))
			df, err := rebuild(meta, d)
			if err != nil {
				t.Fatal(err)
			}
			if got := df.Partition(); !reflect.DeepEqual(got, want) {
				t.Fatalf("partition %#v (%T), want %#v (%T)", got[1000], got[1000], want[1000], want[1000])
			}
		})
	}
}

// TestPartitionNullRoundTrip: a null partition value stays null.
func TestPartitionNullRoundTrip(t *testing.T) {
	meta, spec := partitionedMeta(t, iceberg.PrimitiveTypes.Int64, iceberg.IdentityTransform{}, "")
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "file:///w/f.parquet", iceberg.ParquetFile, map[int]any{1000: nil}, nil, nil, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	df, err := rebuild(meta, throughRaft(t, describe(b.Build())))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := df.Partition()[1000]; !ok || v != nil {
		t.Fatalf("null partition came back as %#v (present %v)", v, ok)
	}
}

// TestPartitionFromOlderNode: an entry an older node recorded carries only
// the JSON values; it rebuilds as it did before (exact for the values JSON
// keeps: integers up to 2^53, strings, dates).
func TestPartitionFromOlderNode(t *testing.T) {
	cases := []struct {
		typ  iceberg.Type
		json string
		want any
	}{
		{iceberg.PrimitiveTypes.Int64, `1234567`, int64(1234567)},
		{iceberg.PrimitiveTypes.Int32, `-5`, int32(-5)},
		{iceberg.PrimitiveTypes.Date, `20455`, iceberg.Date(20455)},
		{iceberg.PrimitiveTypes.String, `"eu"`, "eu"},
		{iceberg.PrimitiveTypes.Bool, `true`, true},
	}
	for _, tc := range cases {
		t.Run(tc.typ.String(), func(t *testing.T) {
			meta, _ := partitionedMeta(t, tc.typ, iceberg.IdentityTransform{}, "")
			var d ledger.FileDescriptor
			old := `{"path":"file:///w/f.parquet","format":"PARQUET","spec_id":0,"records":1,"size":10,"partition":{"1000":` + tc.json + `}}`
			if err := json.Unmarshal([]byte(old), &d); err != nil {
				t.Fatal(err)
			}
			df, err := rebuild(meta, d)
			if err != nil {
				t.Fatal(err)
			}
			if got := df.Partition()[1000]; !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v (%T), want %#v", got, got, tc.want)
			}
		})
	}
}

// TestPartitionFromOlderNodeExact: an older node's entry (JSON values only)
// of any partition type rebuilds with the exact value: JSON's where JSON
// held it, else the transform of the file's bounds on the source column
// (a long of 2^60+1 does not become 2^60). Without bounds, a long above
// 2^53 or a decimal is refused naming why, never committed rounded.
func TestPartitionFromOlderNodeExact(t *testing.T) {
	for _, tc := range partitionCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			meta, spec := partitionedMeta(t, tc.typ, tc.tr, tc.version)
			val := tc.tr.Apply(iceberg.Optional[iceberg.Literal]{Valid: true, Val: tc.src})
			want := map[int]any{1000: val.Val.Any()}
			b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "file:///w/db/t/data/f.parquet", iceberg.ParquetFile, want, nil, nil, 1, 10)
			if err != nil {
				t.Fatal(err)
			}
			bound, err := tc.src.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			built := b.Build()
			d := describe(built)
			// As the build before exact values recorded it: the Go values
			// alone, which JSON turns into numbers.
			d.PartValues, d.Partition = nil, maps.Clone(built.Partition())
			withBounds := d
			withBounds.LowerBounds, withBounds.UpperBounds = map[int][]byte{1: bound}, map[int][]byte{1: bound}
			df, err := rebuild(meta, throughRaft(t, withBounds))
			if err != nil {
				t.Fatal(err)
			}
			if got := df.Partition(); !reflect.DeepEqual(got, want) {
				t.Fatalf("with bounds: partition %#v (%T), want %#v (%T)", got[1000], got[1000], want[1000], want[1000])
			}
			// Without bounds: exact where JSON is, refused where a
			// rounded value would pass unseen.
			df, err = rebuild(meta, throughRaft(t, d))
			exact := exactLegacy(spec.PartitionType(meta.CurrentSchema()).FieldList[0].Type, d.Partition[1000])
			switch {
			case err == nil && !reflect.DeepEqual(df.Partition(), want) && mustBeExact(tc.typ):
				t.Fatalf("without bounds: committed %#v, want %#v or a refusal", df.Partition()[1000], want[1000])
			case err != nil && !errors.Is(err, ErrInexactPartition) && exact:
				t.Fatalf("without bounds, a value JSON holds: %v", err)
			}
			// What this build records, read as the build before reads it
			// (legacyValue is its reading): the right value, or a refusal,
			// never a rounded long.
			ours := throughRaft(t, describe(built))
			old, err := legacyValue(spec.PartitionType(meta.CurrentSchema()).FieldList[0].Type, ours.Partition[1000])
			if err == nil && mustBeExact(tc.typ) && !reflect.DeepEqual(old, want[1000]) {
				if _, isDecimal := tc.typ.(iceberg.DecimalType); !isDecimal { // a decimal comes back as JSON's map: refused by iceberg-go
					t.Fatalf("the build before reads this build's entry as %#v, want %#v or a refusal", old, want[1000])
				}
			}
		})
	}
}
