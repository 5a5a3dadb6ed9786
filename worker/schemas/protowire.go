package schemas

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/floe-io/floe/internal/records"
)

// A direct decoder of the Protobuf wire format into records values, planned
// once per message from its descriptor and shape. It replaced unmarshalling
// into dynamicpb and walking protoreflect, which cost 3 to 4 times as much.

type wktKind uint8

const (
	wktNone wktKind = iota
	wktKindTimestamp
	wktKindDuration
	wktKindJSON    // Struct, Value, ListValue: as JSON text, through dynamicpb
	wktKindWrapper // Int64Value...: the wrapped value
)

// pmsg is the plan of one message type at one place in the shape tree.
type pmsg struct {
	md      protoreflect.MessageDescriptor
	wkt     wktKind
	wrapped *pfield
	fields  []*pfield
	byNum   map[protowire.Number]*pfield
}

// pfield is the plan of one field.
type pfield struct {
	name        string
	num         protowire.Number
	kind        protoreflect.Kind
	list, isMap bool
	presence    bool   // null when absent
	keep        bool   // has a column
	cut         string // a recursive message past MaxRecursion: present data is refused
	msg         *pmsg  // message kinds
	mkey, mval  *pfield
	enum        map[int32]string
}

var errWire = errors.New("invalid Protobuf wire data")

// planProto builds the plan of md for its shape (from protoShape).
func planProto(md protoreflect.MessageDescriptor, shape *records.Shape) *pmsg {
	return planMsg(md, shape)
}

func planMsg(md protoreflect.MessageDescriptor, shape *records.Shape) *pmsg {
	m := &pmsg{md: md, byNum: map[protowire.Number]*pfield{}}
	switch md.FullName() {
	case wktTimestamp:
		m.wkt = wktKindTimestamp
		return m
	case wktDuration:
		m.wkt = wktKindDuration
		return m
	case wktStruct, wktValue, wktList:
		m.wkt = wktKindJSON
		return m
	}
	if _, ok := wrappers[md.FullName()]; ok {
		m.wkt = wktKindWrapper
		m.wrapped = planField(md.Fields().ByName("value"), shape)
		return m
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		var fs *records.Shape
		if shape != nil {
			if f := shape.Lookup(string(fd.Name())); f != nil {
				fs = f.Shape
			}
		}
		pf := planField(fd, fs)
		m.fields = append(m.fields, pf)
		m.byNum[fd.Number()] = pf
	}
	return m
}

func planField(fd protoreflect.FieldDescriptor, shape *records.Shape) *pfield {
	f := &pfield{name: string(fd.Name()), num: fd.Number(), kind: fd.Kind(), list: fd.IsList(), isMap: fd.IsMap(),
		presence: fd.HasPresence() && !fd.IsList() && !fd.IsMap(), keep: shape != nil}
	if fd.Message() != nil && !fd.IsMap() {
		f.presence = !fd.IsList()
	}
	if e := fd.Enum(); e != nil {
		f.enum = map[int32]string{}
		vals := e.Values()
		for i := range vals.Len() {
			f.enum[int32(vals.Get(i).Number())] = string(vals.Get(i).Name())
		}
	}
	switch {
	case fd.IsMap():
		var ks, vs *records.Shape
		if shape != nil {
			ks, vs = shape.Key, shape.Elem
		}
		f.mkey, f.mval = planField(fd.MapKey(), ks), planField(fd.MapValue(), vs)
	case fd.Message() != nil:
		ms := shape
		if shape != nil && fd.IsList() {
			ms = shape.Elem
		}
		if shape == nil {
			if fd.Message().Fields().Len() > 0 {
				f.cut = string(fd.Message().FullName())
			}
			return f
		}
		f.msg = planMsg(fd.Message(), ms)
	}
	return f
}

// decode reads one message. Byte slices are copied.
func (m *pmsg) decode(b []byte) (any, error) {
	switch m.wkt {
	case wktKindTimestamp, wktKindDuration:
		return m.decodeTime(b)
	case wktKindJSON:
		dm := dynamicpb.NewMessage(m.md)
		if err := protoUnmarshal(b, dm); err != nil {
			return nil, err
		}
		return protoJSON(dm)
	case wktKindWrapper:
		return m.decodeWrapper(b)
	}
	out := make(map[string]any, len(m.fields))
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errWire
		}
		b = b[n:]
		f := m.byNum[num]
		if f == nil || (!f.keep && f.cut == "") {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, errWire
			}
			b = b[n:]
			continue
		}
		if f.cut != "" {
			return nil, &fieldError{path: f.name, err: fmt.Errorf("recursive type %s nests deeper than %d levels, Floe's limit", f.cut, MaxRecursion)}
		}
		n, err := f.read(out, typ, b)
		if err != nil {
			return nil, under(f.name, err)
		}
		b = b[n:]
	}
	m.fillAbsent(out)
	return out, nil
}

// decodeTime reads a google.protobuf.Timestamp (a time) or Duration
// (microseconds).
func (m *pmsg) decodeTime(b []byte) (any, error) {
	var sec, nanos int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errWire
		}
		b = b[n:]
		if typ != protowire.VarintType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, errWire
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, errWire
		}
		b = b[n:]
		switch num {
		case 1:
			sec = int64(v)
		case 2:
			nanos = int64(int32(v))
		}
	}
	if m.wkt == wktKindDuration {
		return sec*1e6 + nanos/1e3, nil
	}
	return time.Unix(sec, nanos).UTC(), nil
}

// decodeWrapper reads a wrapper type (google.protobuf.Int64Value...) as its
// value, the zero value when absent.
func (m *pmsg) decodeWrapper(b []byte) (any, error) {
	var v any
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errWire
		}
		b = b[n:]
		if num != 1 {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, errWire
			}
			b = b[n:]
			continue
		}
		x, n, err := m.wrapped.scalar(typ, b)
		if err != nil {
			return nil, err
		}
		v, b = x, b[n:]
	}
	if v == nil {
		v = m.wrapped.zero()
	}
	return v, nil
}

// fillAbsent gives the kept fields a message left out their proto3 value:
// empty maps and lists, zero scalars (fields with presence stay null).
func (m *pmsg) fillAbsent(out map[string]any) {
	for _, f := range m.fields {
		if !f.keep {
			continue
		}
		if _, ok := out[f.name]; ok {
			continue
		}
		switch {
		case f.isMap:
			out[f.name] = []records.MapEntry{}
		case f.list:
			out[f.name] = []any{}
		case !f.presence:
			out[f.name] = f.zero()
		}
	}
}

// read decodes one occurrence of f into out and returns the bytes used.
func (f *pfield) read(out map[string]any, typ protowire.Type, b []byte) (int, error) {
	switch {
	case f.isMap:
		if typ != protowire.BytesType {
			return 0, errWire
		}
		entry, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, errWire
		}
		k, v, err := f.mapEntry(entry)
		if err != nil {
			return 0, err
		}
		l, _ := out[f.name].([]records.MapEntry)
		out[f.name] = append(l, records.MapEntry{Key: k, Value: v})
		return n, nil
	case f.list && typ == protowire.BytesType && f.msg == nil && f.kind != protoreflect.StringKind && f.kind != protoreflect.BytesKind:
		packed, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, errWire
		}
		l, _ := out[f.name].([]any)
		wt := packedType(f.kind)
		for len(packed) > 0 {
			v, m, err := f.scalar(wt, packed)
			if err != nil {
				return 0, under("[]", err)
			}
			l, packed = append(l, v), packed[m:]
		}
		out[f.name] = l
		return n, nil
	}
	v, n, err := f.one(typ, b)
	if err != nil {
		if f.list {
			err = under("[]", err)
		}
		return 0, err
	}
	if f.list {
		l, _ := out[f.name].([]any)
		out[f.name] = append(l, v)
	} else {
		out[f.name] = v // the last occurrence wins
	}
	return n, nil
}

// one decodes a single value (a message or a scalar).
func (f *pfield) one(typ protowire.Type, b []byte) (any, int, error) {
	if f.msg != nil {
		if typ != protowire.BytesType {
			return nil, 0, errWire
		}
		body, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, 0, errWire
		}
		v, err := f.msg.decode(body)
		return v, n, err
	}
	return f.scalar(typ, b)
}

func (f *pfield) mapEntry(b []byte) (k, v any, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, errWire
		}
		b = b[n:]
		var x any
		switch num {
		case 1:
			x, n, err = f.mkey.one(typ, b)
			k = x
		case 2:
			x, n, err = f.mval.one(typ, b)
			if err != nil {
				err = under("{}", err)
			}
			v = x
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if err != nil {
			return nil, nil, err
		}
		if n < 0 {
			return nil, nil, errWire
		}
		b = b[n:]
	}
	if k == nil {
		k = f.mkey.zero()
	}
	if v == nil {
		if f.mval.msg != nil {
			v, err = f.mval.msg.decode(nil)
		} else {
			v = f.mval.zero()
		}
	}
	return k, v, err
}

func packedType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

// scalar decodes one scalar of f's kind into the Go type of its shape: it
// consumes the value by its wire type, then converts it by the field's kind.
func (f *pfield) scalar(typ protowire.Type, b []byte) (any, int, error) {
	wrong := func() (any, int, error) {
		return nil, 0, fmt.Errorf("wire type %d does not fit a %s field", typ, f.kind)
	}
	var (
		v   uint64 // a varint or fixed value
		raw []byte // a length-delimited one
		n   int
	)
	switch typ {
	case protowire.VarintType:
		v, n = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var v32 uint32
		v32, n = protowire.ConsumeFixed32(b)
		v = uint64(v32)
	case protowire.Fixed64Type:
		v, n = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		raw, n = protowire.ConsumeBytes(b)
	default:
		return wrong()
	}
	if n < 0 {
		return nil, 0, errWire
	}
	if scalarWireType(f.kind) != typ {
		return wrong()
	}
	switch f.kind {
	case protoreflect.BoolKind:
		return v != 0, n, nil
	case protoreflect.Int32Kind, protoreflect.Sfixed32Kind:
		return int32(v), n, nil
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		return int64(v), n, nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(uint32(v)), n, nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return new(big.Int).SetUint64(v), n, nil
	case protoreflect.Sint32Kind:
		return int32(protowire.DecodeZigZag(v & math.MaxUint32)), n, nil
	case protoreflect.Sint64Kind:
		return protowire.DecodeZigZag(v), n, nil
	case protoreflect.EnumKind:
		return f.enumName(int32(v)), n, nil
	case protoreflect.FloatKind:
		return math.Float32frombits(uint32(v)), n, nil
	case protoreflect.DoubleKind:
		return math.Float64frombits(v), n, nil
	case protoreflect.StringKind:
		return string(raw), n, nil
	case protoreflect.BytesKind:
		return append([]byte{}, raw...), n, nil
	}
	return wrong()
}

// scalarWireType is the wire type a scalar of kind k arrives in, unpacked.
func scalarWireType(k protoreflect.Kind) protowire.Type {
	if k == protoreflect.StringKind || k == protoreflect.BytesKind {
		return protowire.BytesType
	}
	return packedType(k)
}

func (f *pfield) enumName(n int32) string {
	if s, ok := f.enum[n]; ok {
		return s
	}
	return fmt.Sprint(n) // a value newer than the schema
}

// zero is the default a proto3 reader sees for an absent field.
func (f *pfield) zero() any {
	switch f.kind {
	case protoreflect.BoolKind:
		return false
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return int32(0)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(0)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return new(big.Int)
	case protoreflect.FloatKind:
		return float32(0)
	case protoreflect.DoubleKind:
		return float64(0)
	case protoreflect.StringKind:
		return ""
	case protoreflect.BytesKind:
		return []byte{}
	case protoreflect.EnumKind:
		return f.enumName(0)
	}
	return nil
}
