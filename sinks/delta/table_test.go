package delta

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/ledger"
)

// TestPartitionString pins "Partition Value Serialization" per type.
func TestPartitionString(t *testing.T) {
	ts := iceberg.Timestamp(1_700_000_000_123_456)
	for _, c := range []struct {
		name string
		typ  iceberg.Type
		v    any
		want string
	}{
		{"string", iceberg.PrimitiveTypes.String, "eu west", "eu west"},
		{"bool", iceberg.PrimitiveTypes.Bool, true, "true"},
		{"int", iceberg.PrimitiveTypes.Int32, int32(-7), "-7"},
		{"long above 2^53", iceberg.PrimitiveTypes.Int64, int64(1<<60 + 1), "1152921504606846977"},
		{"double", iceberg.PrimitiveTypes.Float64, 1.5, "1.5"},
		{"decimal", iceberg.DecimalTypeOf(10, 2), iceberg.Decimal{Val: decimal128.FromI64(-12345), Scale: 2}, "-123.45"},
		{"date", iceberg.PrimitiveTypes.Date, iceberg.Date(19723), "2024-01-01"},
		{"timestamptz", iceberg.PrimitiveTypes.TimestampTz, ts, "2023-11-14T22:13:20.123456Z"},
		{"timestamp ntz", iceberg.PrimitiveTypes.Timestamp, ts, "2023-11-14 22:13:20.123456"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := partitionString(c.typ, c.v)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestPartitionColumns: identity partitions on top-level columns are
// Delta partition columns; other transforms are not.
func TestPartitionColumns(t *testing.T) {
	sc := testSchema()
	for _, c := range []struct {
		name string
		spec iceberg.PartitionSpec
		want []string
	}{
		{"unpartitioned", *iceberg.UnpartitionedSpec, nil},
		{"identity", byRegion(), []string{"region"}},
		{"day", byDay(), nil},
		{"identity and bucket", iceberg.NewPartitionSpecID(3,
			iceberg.PartitionField{SourceIDs: []int{colID}, FieldID: 1002, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 8}},
			iceberg.PartitionField{SourceIDs: []int{colRegion}, FieldID: 1003, Name: "region", Transform: iceberg.IdentityTransform{}}),
			[]string{"region"}},
		{"identity on a nested column", iceberg.NewPartitionSpecID(4,
			iceberg.PartitionField{SourceIDs: []int{colNestA}, FieldID: 1004, Name: "a", Transform: iceberg.IdentityTransform{}}), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, pc := range partitionColumns(sc, c.spec) {
				got = append(got, pc.name)
			}
			if !sameColumns(partitionColumns(sc, c.spec), c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestPartitionValues reads both descriptor forms: the binary one and the
// JSON one an older node wrote.
func TestPartitionValues(t *testing.T) {
	cols := partitionColumns(testSchema(), byRegion())
	for _, c := range []struct {
		name string
		d    ledger.FileDescriptor
		want *string
		err  error
	}{
		{"binary", ledger.FileDescriptor{PartValues: map[int][]byte{1000: lit(t, iceberg.NewLiteral("eu"))}}, ptr("eu"), nil},
		{"null", ledger.FileDescriptor{PartValues: map[int][]byte{1000: nil}}, nil, nil},
		{"empty string is not null", ledger.FileDescriptor{PartValues: map[int][]byte{1000: {}}}, ptr(""), nil},
		{"legacy json", ledger.FileDescriptor{Partition: map[int]any{1000: "us"}}, ptr("us"), nil},
		{"missing", ledger.FileDescriptor{}, nil, ErrInvalidCommit},
	} {
		t.Run(c.name, func(t *testing.T) {
			pv, err := partitionValues(cols, c.d)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := pv["region"]
			if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestRelPath(t *testing.T) {
	for _, c := range []struct{ loc, path, want string }{
		{"file:///wh/ns/t", "file:///wh/ns/t/data/a.parquet", "data/a.parquet"},
		{"/wh/ns/t/", "file:///wh/ns/t/data/region=eu/a.parquet", "data/region=eu/a.parquet"},
		{"s3://b/wh/t", "s3://b/wh/t/data/x y%.parquet", "data/x%20y%25.parquet"},
		{"s3://b/wh/t", "s3://b/wh/t2/data/a.parquet", ""},
		{"s3://b/wh/t", "s3://b/wh/t/../x.parquet", ""},
	} {
		got, err := relPath(c.loc, c.path)
		if c.want == "" {
			if !errors.Is(err, ErrInvalidCommit) {
				t.Errorf("%s under %s: got %q, %v; want ErrInvalidCommit", c.path, c.loc, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s under %s: got %q, %v; want %q", c.path, c.loc, got, err, c.want)
		}
	}
}

// TestStats renders statistics from Iceberg bounds: nested structs
// mirrored, lists left out, partition columns skipped, timestamps widened
// to milliseconds outward.
func TestStats(t *testing.T) {
	d := ledger.FileDescriptor{
		Path: "p", RecordCount: 3,
		NullCounts: map[int]int64{colID: 0, colRegion: 1, colNestA: 2, colTagEl: 0},
		LowerBounds: map[int][]byte{colID: lit(t, iceberg.NewLiteral(int64(1))), colRegion: lit(t, iceberg.NewLiteral("eu")),
			colAmount: lit(t, iceberg.DecimalLiteral(iceberg.Decimal{Val: decimal128.FromI64(-150), Scale: 2})),
			colTS:     lit(t, iceberg.NewLiteral(iceberg.Timestamp(1_700_000_000_123_456))),
			colNestA:  lit(t, iceberg.NewLiteral(int32(4))), colTagEl: lit(t, iceberg.NewLiteral("a"))},
		UpperBounds: map[int][]byte{colID: lit(t, iceberg.NewLiteral(int64(9))), colRegion: lit(t, iceberg.NewLiteral("us")),
			colAmount: lit(t, iceberg.DecimalLiteral(iceberg.Decimal{Val: decimal128.FromI64(99999), Scale: 2})),
			colTS:     lit(t, iceberg.NewLiteral(iceberg.Timestamp(1_700_000_000_123_456))),
			colNestA:  lit(t, iceberg.NewLiteral(int32(8))), colTagEl: lit(t, iceberg.NewLiteral("z"))},
	}
	for _, c := range []struct {
		name string
		skip map[string]bool
		want string
	}{
		{"unpartitioned", nil, `{"numRecords":3,` +
			`"minValues":{"amount":-1.50,"id":1,"nested":{"a":4},"region":"eu","ts":"2023-11-14T22:13:20.123Z"},` +
			`"maxValues":{"amount":999.99,"id":9,"nested":{"a":8},"region":"us","ts":"2023-11-14T22:13:20.124Z"},` +
			`"nullCount":{"id":0,"nested":{"a":2},"region":1}}`},
		{"partitioned by region", map[string]bool{"region": true}, `{"numRecords":3,` +
			`"minValues":{"amount":-1.50,"id":1,"nested":{"a":4},"ts":"2023-11-14T22:13:20.123Z"},` +
			`"maxValues":{"amount":999.99,"id":9,"nested":{"a":8},"ts":"2023-11-14T22:13:20.124Z"},` +
			`"nullCount":{"id":0,"nested":{"a":2}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := statsJSON(testSchema(), c.skip, d)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			if !json.Valid([]byte(got)) {
				t.Error("not JSON")
			}
		})
	}
}
