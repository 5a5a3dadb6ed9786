package registrytest

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Frame prefixes a payload with the Confluent header (magic 0, id) and,
// for Protobuf, the message indexes (nil for Avro and JSON).
func Frame(id int, indexes []int, payload []byte) []byte {
	out := []byte{0}
	out = binary.BigEndian.AppendUint32(out, uint32(id))
	if indexes != nil {
		if len(indexes) == 1 && indexes[0] == 0 {
			out = binary.AppendVarint(out, 0)
		} else {
			out = binary.AppendVarint(out, int64(len(indexes)))
			for _, i := range indexes {
				out = binary.AppendVarint(out, int64(i))
			}
		}
	}
	return append(out, payload...)
}

// Avro encodes v with hamba/avro (an implementation independent of Floe's
// decoder) under the schema text.
func Avro(text string, v any) ([]byte, error) {
	sc, ok := parsed.Load(text)
	if !ok {
		p, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
		if err != nil {
			return nil, err
		}
		sc, _ = parsed.LoadOrStore(text, p)
	}
	return avro.Marshal(sc.(avro.Schema), v)
}

// parsed caches schemas by text: parsing costs 15 times the encoding.
var parsed sync.Map

// Proto compiles a .proto text and returns the named message's descriptor.
func Proto(text, message string) (protoreflect.MessageDescriptor, error) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"test.proto": text}),
	})}
	files, err := c.Compile(context.Background(), "test.proto")
	if err != nil {
		return nil, err
	}
	md := files[0].FindDescriptorByName(protoreflect.FullName(message))
	m, ok := md.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("no message %s", message)
	}
	return m, nil
}

// ProtoFromJSON builds a message of md from its protojson form and
// encodes it.
func ProtoFromJSON(md protoreflect.MessageDescriptor, js string) ([]byte, error) {
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(js), m); err != nil {
		return nil, err
	}
	return proto.Marshal(m)
}
