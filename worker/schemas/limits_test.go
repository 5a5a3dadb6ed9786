package schemas

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// deepAvro nests depth records, each a field f of the one above.
func deepAvro(depth int) string {
	s := `"long"`
	for i := depth; i > 0; i-- {
		s = fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"f","type":%s}]}`, i, s)
	}
	return s
}

func deepProto(depth int) string {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage d;\n")
	for i := 1; i < depth; i++ {
		fmt.Fprintf(&b, "message M%d { M%d f = 1; }\n", i, i+1)
	}
	fmt.Fprintf(&b, "message M%d { int64 f = 1; }\n", depth)
	return b.String()
}

func deepJSONSchema(depth int) string {
	s := `{"type":"integer"}`
	for range depth {
		s = `{"type":"object","properties":{"f":` + s + `}}`
	}
	return s
}

func wideAvro(n int) string {
	var fs []string
	for i := range n {
		fs = append(fs, fmt.Sprintf(`{"name":"c%d","type":"long"}`, i))
	}
	return `{"type":"record","name":"W","fields":[` + strings.Join(fs, ",") + `]}`
}

// TestSchemaLimits: a registry schema no table could follow (nesting past
// MaxNestingDepthCap, more than MaxColumnsCap columns, names that collide
// ignoring case) makes every record of it bad, naming the schema id and
// the limit, before any value is decoded; and a JSON Schema value nesting
// past the cap is refused before encoding/json builds it.
func TestSchemaLimits(t *testing.T) {
	deepValue := strings.Repeat(`{"x":`, 300) + "1" + strings.Repeat("}", 300)
	cases := []struct {
		name, typ, format, schema string
		indexes                   []int
		payload                   []byte
		want                      string
	}{
		{"deep Avro", "AVRO", "avro", deepAvro(300), nil, []byte{2}, "nests deeper than max_nesting_depth 256"},
		{"deep Protobuf", "PROTOBUF", "protobuf", deepProto(300), []int{0}, nil, "nests deeper than max_nesting_depth 256"},
		{"deep JSON Schema", "JSON", "json_schema", deepJSONSchema(300), nil, []byte(`{}`), "nests deeper than max_nesting_depth 256"},
		{"wide Avro", "AVRO", "avro", wideAvro(10001), nil, []byte{2}, "more than max_columns 10000"},
		{"Avro A and a", "AVRO", "avro", `{"type":"record","name":"C","fields":[{"name":"A","type":"long"},{"name":"a","type":"long"}]}`, nil, []byte{2, 2}, "field a: collides with field A"},
		{"deep JSON value", "JSON", "json_schema", `{"type":"object","properties":{"v":{"type":"integer"}}}`, nil, []byte(deepValue), "value nests deeper than 256 levels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dec, fake := newDecoder(t)
			id := fake.Register("s-value", c.typ, c.schema)
			_, err := dec.Value(context.Background(), c.format, "", registrytest.Frame(id, c.indexes, c.payload))
			if !errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a bad record saying %q", err, c.want)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("schema %d", id)) && !strings.Contains(err.Error(), fmt.Sprintf("schema id %d", id)) {
				t.Fatalf("%v does not name schema %d", err, id)
			}
		})
	}
	// At the cap itself the schema is usable.
	dec, fake := newDecoder(t)
	id := fake.Register("ok-value", "AVRO", deepAvro(255))
	if _, err := dec.Value(context.Background(), "avro", "", registrytest.Frame(id, nil, []byte{2})); err != nil {
		t.Fatalf("255 levels: %v", err)
	}
}
