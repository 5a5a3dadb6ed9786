package delta

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/ledger"
)

// TestMapSchemaTypes maps each Iceberg type to its Delta type.
func TestMapSchemaTypes(t *testing.T) {
	for _, c := range []struct {
		typ      iceberg.Type
		want     string // the field's "type" JSON
		features []string
	}{
		{iceberg.PrimitiveTypes.Bool, `"boolean"`, nil},
		{iceberg.PrimitiveTypes.Int32, `"integer"`, nil},
		{iceberg.PrimitiveTypes.Int64, `"long"`, nil},
		{iceberg.PrimitiveTypes.Float32, `"float"`, nil},
		{iceberg.PrimitiveTypes.Float64, `"double"`, nil},
		{iceberg.DecimalTypeOf(38, 10), `"decimal(38,10)"`, nil},
		{iceberg.PrimitiveTypes.Date, `"date"`, nil},
		{iceberg.PrimitiveTypes.TimestampTz, `"timestamp"`, nil},
		{iceberg.PrimitiveTypes.Timestamp, `"timestamp_ntz"`, []string{FeatureTimestampNtz}},
		{iceberg.PrimitiveTypes.String, `"string"`, nil},
		{iceberg.PrimitiveTypes.Binary, `"binary"`, nil},
		{iceberg.PrimitiveTypes.UUID, `"binary"`, nil},
		{iceberg.FixedTypeOf(16), `"binary"`, nil},
		{&iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 2, Name: "a", Type: iceberg.PrimitiveTypes.Int32, Required: true}}},
			`{"type":"struct","fields":[{"name":"a","type":"integer","nullable":false,"metadata":{}}]}`, nil},
		{&iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.String, ElementRequired: true},
			`{"type":"array","elementType":"string","containsNull":false}`, nil},
		{&iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Timestamp},
			`{"type":"array","elementType":"timestamp_ntz","containsNull":true}`, []string{FeatureTimestampNtz}},
		{&iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int64},
			`{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true}`, nil},
	} {
		t.Run(c.typ.String(), func(t *testing.T) {
			info, err := mapSchema(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: c.typ}))
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Type   string `json:"type"`
				Fields []struct {
					Name     string          `json:"name"`
					Type     json.RawMessage `json:"type"`
					Nullable bool            `json:"nullable"`
				} `json:"fields"`
			}
			if err := json.Unmarshal([]byte(info.schemaString), &st); err != nil {
				t.Fatal(err)
			}
			if st.Type != "struct" || len(st.Fields) != 1 || st.Fields[0].Name != "c" || !st.Fields[0].Nullable {
				t.Fatalf("schema %s", info.schemaString)
			}
			if string(st.Fields[0].Type) != c.want {
				t.Errorf("type %s, want %s", st.Fields[0].Type, c.want)
			}
			if !slices.Equal(info.features, c.features) {
				t.Errorf("features %v, want %v", info.features, c.features)
			}
		})
	}
}

// TestMapSchemaOmitsTime: a time column (top level, in a struct, as a
// list element or a map value) is left out of the Delta schema and its
// statistics, and the other columns are kept: the Delta log goes on.
func TestMapSchemaOmitsTime(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "at", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 3, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "open", Type: iceberg.PrimitiveTypes.Time}, {ID: 5, Name: "n", Type: iceberg.PrimitiveTypes.Int32}}}},
		iceberg.NestedField{ID: 6, Name: "times", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.Time}},
		iceberg.NestedField{ID: 8, Name: "by", Type: &iceberg.MapType{KeyID: 9, KeyType: iceberg.PrimitiveTypes.String,
			ValueID: 10, ValueType: iceberg.PrimitiveTypes.Time}},
	)
	info, err := mapSchema(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},` +
		`{"name":"s","type":{"type":"struct","fields":[{"name":"n","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`
	if info.schemaString != want {
		t.Fatalf("schema\n%s\nwant\n%s", info.schemaString, want)
	}
	stats, err := statsJSON(sc, nil, ledger.FileDescriptor{Path: "f", RecordCount: 1,
		NullCounts: map[int]int64{1: 0, 2: 0, 4: 1, 5: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stats, `"at"`) || strings.Contains(stats, `"open"`) {
		t.Fatalf("statistics of an omitted time column: %s", stats)
	}
}

// TestMapSchemaRefuses lists the Iceberg schemas Delta cannot express.
func TestMapSchemaRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		fields []iceberg.NestedField
	}{
		{"timestamp_ns", []iceberg.NestedField{{ID: 1, Name: "t", Type: iceberg.PrimitiveTypes.TimestampNs}}},
		{"timestamptz_ns in a list", []iceberg.NestedField{{ID: 1, Name: "l", Type: &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.TimestampTzNs}}}},
		{"names differing in case", []iceberg.NestedField{
			{ID: 1, Name: "Name", Type: iceberg.PrimitiveTypes.String}, {ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := mapSchema(iceberg.NewSchema(0, c.fields...)); !errors.Is(err, ErrUnsupported) {
				t.Errorf("got %v, want ErrUnsupported", err)
			}
		})
	}
}
