package schemas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/floe-io/floe/records"
)

// protoMain is the name the registry's schema text is compiled under.
const protoMain = "floe_registry_schema.proto"

// compileProto compiles a Protobuf schema text with its imports (file name
// -> text, from the schema's references; the google/protobuf well-known
// files are built in).
func compileProto(ctx context.Context, text string, imports map[string]string) (protoreflect.FileDescriptor, error) {
	srcs := map[string]string{protoMain: text}
	for k, v := range imports {
		srcs[k] = v
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(srcs),
	})}
	files, err := c.Compile(ctx, protoMain)
	if err != nil {
		return nil, fmt.Errorf("compiling Protobuf schema: %w", err)
	}
	// Rebuild the descriptors with protodesc: the compiler's own resolve
	// features on every HasPresence call, which tripled decoding time.
	reg := new(protoregistry.Files)
	if err := registerProto(reg, files[0]); err != nil {
		return nil, fmt.Errorf("compiling Protobuf schema: %w", err)
	}
	return reg.FindFileByPath(protoMain)
}

// registerProto adds fd and its imports to reg, taking the well-known
// files from the Go protobuf runtime.
func registerProto(reg *protoregistry.Files, fd protoreflect.FileDescriptor) error {
	if _, err := reg.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		if err := registerProto(reg, imports.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	if g, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path()); err == nil {
		return reg.RegisterFile(g)
	}
	nf, err := protodesc.NewFile(protodesc.ToFileDescriptorProto(fd), reg)
	if err != nil {
		return err
	}
	return reg.RegisterFile(nf)
}

// protoMessage finds the message the wire format's indexes name.
func protoMessage(fd protoreflect.FileDescriptor, indexes []int) (protoreflect.MessageDescriptor, error) {
	msgs := fd.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range indexes {
		if i >= msgs.Len() {
			return nil, fmt.Errorf("%w: message index %v names no message of the schema", ErrWireFormat, indexes)
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	if md == nil {
		return nil, fmt.Errorf("%w: no message index", ErrWireFormat)
	}
	return md, nil
}

// Well-known types with their own mapping.
const (
	wktTimestamp = "google.protobuf.Timestamp"
	wktDuration  = "google.protobuf.Duration"
	wktStruct    = "google.protobuf.Struct"
	wktValue     = "google.protobuf.Value"
	wktList      = "google.protobuf.ListValue"
)

var wrappers = map[protoreflect.FullName]records.Kind{
	"google.protobuf.DoubleValue": records.Double,
	"google.protobuf.FloatValue":  records.Float,
	"google.protobuf.Int64Value":  records.Long,
	"google.protobuf.UInt64Value": records.Decimal,
	"google.protobuf.Int32Value":  records.Int,
	"google.protobuf.UInt32Value": records.Long,
	"google.protobuf.BoolValue":   records.Bool,
	"google.protobuf.StringValue": records.String,
	"google.protobuf.BytesValue":  records.Bytes,
}

// uint64Shape holds every uint64: Iceberg has no unsigned long.
func uint64Shape() *records.Shape {
	return &records.Shape{Kind: records.Decimal, Precision: 20, Scale: 0}
}

type protoCompiler struct {
	depth map[protoreflect.FullName]int
}

// protoShape is the shape of a message's values; fields past MaxRecursion
// are left out (and refused in data by protoValue).
func protoShape(md protoreflect.MessageDescriptor) *records.Shape {
	c := &protoCompiler{depth: map[protoreflect.FullName]int{}}
	s := c.message(md)
	if s == nil || s.Kind != records.Struct {
		return &records.Shape{Kind: records.Struct}
	}
	return s
}

// message returns the shape of a message type, nil when it has no column.
func (c *protoCompiler) message(md protoreflect.MessageDescriptor) *records.Shape {
	switch md.FullName() {
	case wktTimestamp:
		return prim(records.TimestampTz)
	case wktDuration:
		return prim(records.Long) // microseconds: Iceberg has no interval type
	case wktStruct, wktValue, wktList:
		return prim(records.String) // as JSON
	}
	if k, ok := wrappers[md.FullName()]; ok {
		if k == records.Decimal {
			return uint64Shape()
		}
		return prim(k)
	}
	name := md.FullName()
	if c.depth[name] >= MaxRecursion {
		return nil
	}
	c.depth[name]++
	defer func() { c.depth[name]-- }()
	s := &records.Shape{Kind: records.Struct}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fs := c.field(fd); fs != nil {
			s.Fields = append(s.Fields, &records.Field{Name: string(fd.Name()), Shape: fs})
		}
	}
	if len(s.Fields) == 0 {
		return nil // an empty message (or only cut fields) has no column
	}
	return s
}

func (c *protoCompiler) field(fd protoreflect.FieldDescriptor) *records.Shape {
	if fd.IsMap() {
		k, v := c.single(fd.MapKey()), c.single(fd.MapValue())
		if k == nil || v == nil {
			return nil
		}
		return &records.Shape{Kind: records.Map, Key: k, Elem: v}
	}
	s := c.single(fd)
	if s != nil && fd.IsList() {
		return &records.Shape{Kind: records.List, Elem: s}
	}
	return s
}

func (c *protoCompiler) single(fd protoreflect.FieldDescriptor) *records.Shape {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return prim(records.Bool)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return prim(records.Int)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return prim(records.Long)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return uint64Shape()
	case protoreflect.FloatKind:
		return prim(records.Float)
	case protoreflect.DoubleKind:
		return prim(records.Double)
	case protoreflect.StringKind, protoreflect.EnumKind:
		return prim(records.String)
	case protoreflect.BytesKind:
		return prim(records.Bytes)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return c.message(fd.Message())
	}
	return nil
}

// decodeProto unmarshals a message and converts it to values of its shape.
func decodeProto(md protoreflect.MessageDescriptor, shape *records.Shape, body []byte) (map[string]any, error) {
	m := dynamicpb.NewMessage(md)
	// AllowPartial: a missing proto2 required field reads null rather than
	// failing the record, and the check costs a fifth of decoding.
	if err := (proto.UnmarshalOptions{DiscardUnknown: true, AllowPartial: true}).Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("invalid Protobuf payload: %w", err)
	}
	v, err := protoMessageValue(m, shape)
	if err != nil {
		return nil, err
	}
	out, _ := v.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

func protoMessageValue(m protoreflect.Message, shape *records.Shape) (any, error) {
	md := m.Descriptor()
	switch md.FullName() {
	case wktTimestamp:
		f := md.Fields()
		sec, nanos := m.Get(f.ByName("seconds")).Int(), m.Get(f.ByName("nanos")).Int()
		return time.Unix(sec, nanos).UTC(), nil
	case wktDuration:
		f := md.Fields()
		sec, nanos := m.Get(f.ByName("seconds")).Int(), m.Get(f.ByName("nanos")).Int()
		return sec*1e6 + nanos/1e3, nil
	case wktStruct, wktValue, wktList:
		b, err := protojson.Marshal(m.Interface())
		if err != nil {
			return nil, err
		}
		// protojson varies its whitespace on purpose; compact it so equal
		// values are equal strings.
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			return nil, err
		}
		return c.String(), nil
	}
	if _, ok := wrappers[md.FullName()]; ok {
		fd := md.Fields().ByName("value")
		return protoScalar(fd, m.Get(fd))
	}
	out := make(map[string]any, len(shape.Fields))
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		fs := shape.Lookup(name)
		// Message fields, and fields with explicit presence, are null when
		// absent; proto3 scalars read their default, as every proto reader does.
		if (fd.HasPresence() || fd.Message() != nil) && !fd.IsList() && !fd.IsMap() && !m.Has(fd) {
			continue
		}
		if fs == nil {
			if m.Has(fd) && fd.Message() != nil && !isEmptyMessageType(fd) {
				return nil, under(name, fmt.Errorf("recursive type %s nests deeper than %d levels, Floe's limit", fd.Message().FullName(), MaxRecursion))
			}
			continue
		}
		v, err := protoFieldValue(fd, m.Get(fd), fs.Shape)
		if err != nil {
			return nil, under(name, err)
		}
		if v != nil {
			out[name] = v
		}
	}
	return out, nil
}

// isEmptyMessageType: messages without columns (empty ones) are dropped,
// not refused.
func isEmptyMessageType(fd protoreflect.FieldDescriptor) bool {
	return fd.Message() != nil && fd.Message().Fields().Len() == 0
}

func protoFieldValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, shape *records.Shape) (any, error) {
	switch {
	case fd.IsMap():
		mp := v.Map()
		out := make([]records.MapEntry, 0, mp.Len())
		var err error
		mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			var kv, vv any
			if kv, err = protoSingle(fd.MapKey(), k.Value(), shape.Key); err != nil {
				return false
			}
			if vv, err = protoSingle(fd.MapValue(), mv, shape.Elem); err != nil {
				err = under("{}", err)
				return false
			}
			out = append(out, records.MapEntry{Key: kv, Value: vv})
			return true
		})
		return out, err
	case fd.IsList():
		l := v.List()
		out := make([]any, l.Len())
		for i := range l.Len() {
			e, err := protoSingle(fd, l.Get(i), shape.Elem)
			if err != nil {
				return nil, under("[]", err)
			}
			out[i] = e
		}
		return out, nil
	}
	return protoSingle(fd, v, shape)
}

func protoSingle(fd protoreflect.FieldDescriptor, v protoreflect.Value, shape *records.Shape) (any, error) {
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		return protoMessageValue(v.Message(), shape)
	}
	return protoScalar(fd, v)
}

func protoScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool(), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return int32(v.Int()), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int(), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(v.Uint()), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return new(big.Int).SetUint64(v.Uint()), nil
	case protoreflect.FloatKind:
		return float32(v.Float()), nil
	case protoreflect.DoubleKind:
		return v.Float(), nil
	case protoreflect.StringKind:
		return v.String(), nil
	case protoreflect.BytesKind:
		return append([]byte{}, v.Bytes()...), nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return fmt.Sprint(int32(v.Enum())), nil // a value newer than the schema
	}
	return nil, fmt.Errorf("unsupported Protobuf kind %s", fd.Kind())
}
