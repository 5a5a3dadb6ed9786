package schemas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/floe-io/floe/internal/records"
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

// decodeProto decodes a message's wire bytes into values of its shape.
func decodeProto(plan *pmsg, body []byte) (map[string]any, error) {
	v, err := plan.decode(body)
	if err != nil {
		return nil, fmt.Errorf("invalid Protobuf payload: %w", err)
	}
	out, _ := v.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

// protoUnmarshal fills a dynamic message (for Struct, Value and ListValue,
// rendered as JSON).
//
// protobuf-go (v1.36.12) panics on some malformed map entries in its
// reflective decoder: a key given twice, the second time with the wrong
// wire type, leaves the key unset and MapKey panics. A record is user input,
// so the panic becomes a poison-record error instead of killing the node.
func protoUnmarshal(b []byte, m *dynamicpb.Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid Protobuf payload: malformed %s: %v", m.Descriptor().FullName(), r)
		}
	}()
	if err := (proto.UnmarshalOptions{DiscardUnknown: true, AllowPartial: true}).Unmarshal(b, m); err != nil {
		return fmt.Errorf("invalid Protobuf payload: %w", err)
	}
	return nil
}

// protoJSON renders a Struct, Value or ListValue as compact JSON.
func protoJSON(m protoreflect.Message) (string, error) {
	b, err := protojson.Marshal(m.Interface())
	if err != nil {
		return "", err
	}
	// protojson varies its whitespace on purpose; compact it so equal
	// values are equal strings.
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return "", err
	}
	return c.String(), nil
}
