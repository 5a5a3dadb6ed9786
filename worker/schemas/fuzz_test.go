package schemas

import (
	"bytes"
	"context"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// The fuzz targets feed arbitrary bytes to every decoder of record bytes:
// none may panic, and whatever they accept must fit the schema's shape
// within the caps. Seeds are real payloads of the test fixtures plus the
// edge cases found so far (testdata/fuzz holds the committed corpus).

// FuzzWireHeader: the Confluent framing (magic byte, schema id, Protobuf
// message indexes) never panics, and a frame AppendHeader made reads back.
func FuzzWireHeader(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1}, true)
	f.Add(AppendHeader(nil, 7, []int{0}), true)
	f.Add(AppendHeader(nil, 1<<31-1, []int{1, 2, 3}), true)
	f.Add([]byte{1, 2, 3}, false)
	f.Add([]byte{0, 0, 0, 0, 9, 0x7f}, true)
	f.Fuzz(func(t *testing.T, b []byte, proto bool) {
		id, body, err := header(b)
		if err != nil {
			return
		}
		if !proto {
			if !bytes.Equal(AppendHeader(nil, id, nil), b[:5]) {
				t.Fatalf("header of %x read as id %d", b[:5], id)
			}
			return
		}
		idx, rest, err := messageIndexes(body)
		if err != nil {
			return
		}
		if len(idx) == 0 || len(rest) > len(body) {
			t.Fatalf("indexes %v, %d bytes left of %d", idx, len(rest), len(body))
		}
	})
}

// FuzzAvroValue decodes arbitrary bytes with the all-types and order
// schemas.
func FuzzAvroValue(f *testing.F) {
	type schema struct {
		node  *avroNode
		shape *records.Shape
	}
	var ss []schema
	for _, text := range []string{registrytest.AvroAllTypes, registrytest.OrderAvro} {
		n, s, err := compileAvro(text, &avro.SchemaCache{})
		if err != nil {
			f.Fatal(err)
		}
		ss = append(ss, schema{n, s})
	}
	for i := range 3 {
		p, err := registrytest.Avro(registrytest.OrderAvro, registrytest.OrderAvroValue(i))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(1), p)
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add(uint8(1), []byte{2, 0x80, 0x80, 0x80, 0x80, 0x08})
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		s := ss[int(which)%len(ss)]
		r := avroReader{b: body}
		v, err := r.decode(s.node)
		if err != nil {
			return
		}
		if _, ok := v.(map[string]any); !ok || r.pos > len(body) {
			t.Fatalf("accepted %T, position %d of %d", v, r.pos, len(body))
		}
	})
}

// FuzzProtobufValue decodes arbitrary bytes with the all-types message
// (recursive, with maps, well-known types and wrappers) and the order.
func FuzzProtobufValue(f *testing.F) {
	var plans []*pmsg
	for _, c := range []struct{ text, msg string }{{registrytest.ProtoAllTypes, "shop.Order"}, {registrytest.OrderProto, "bench.Order"}} {
		fd, err := compileProto(context.Background(), c.text, nil)
		if err != nil {
			f.Fatal(err)
		}
		md, err := protoMessage(fd, []int{0})
		if err != nil {
			f.Fatal(err)
		}
		plans = append(plans, planProto(md, protoShape(md)))
		pmd, err := registrytest.Proto(c.text, c.msg)
		if err != nil {
			f.Fatal(err)
		}
		js := registrytest.OrderProtoJSON(1)
		if c.msg == "shop.Order" {
			js = `{"b": true, "i": -5, "m": {"k": 7}, "item": {"sku": "A1"}, "next": {"next": {"s": "x"}}, "attrs": {"a": [1]}}`
		}
		p, err := registrytest.ProtoFromJSON(pmd, js)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(len(plans)-1), p)
	}
	f.Add(uint8(0), []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(uint8(0), []byte{0x0b, 0x0b, 0x0b, 0x0c})
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		v, err := decodeProto(plans[int(which)%len(plans)], body)
		if err == nil && v == nil {
			t.Fatal("accepted without a value")
		}
	})
}

// FuzzJSONSchemaValue decodes arbitrary text with the all-types schema
// (recursive through $ref) and a schema whose values are wrapped.
func FuzzJSONSchemaValue(f *testing.F) {
	var ts []*jsonType
	for _, text := range []string{registrytest.JSONAllTypes, `{"type":"array","items":{"type":"integer"}}`} {
		typ, err := compileJSONSchema(text, nil)
		if err != nil {
			f.Fatal(err)
		}
		ts = append(ts, typ)
	}
	f.Add(uint8(0), `{"b": true, "n": 7, "x": 1.5, "s": "s", "arr": [1, 2], "m": {"k": "v"}, "next": {"n": 1}}`)
	f.Add(uint8(0), `{"day": "2024-02-29", "at": "2024-02-29T13:14:15Z", "id": "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11", "bin": "AP8="}`)
	f.Add(uint8(1), `[1, 2, 3]`)
	f.Add(uint8(0), `{"s": "\ud800", "n": 1e400}`)
	f.Add(uint8(0), `[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]`)
	f.Fuzz(func(t *testing.T, which uint8, doc string) {
		v, err := decodeJSONSchema(ts[int(which)%len(ts)], []byte(doc))
		if err == nil && v == nil {
			t.Fatal("accepted without a value")
		}
	})
}
