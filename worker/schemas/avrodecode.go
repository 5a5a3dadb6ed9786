package schemas

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/records"
)

// avroReader reads the Avro binary encoding.
type avroReader struct {
	b   []byte
	pos int
}

var errTruncated = fmt.Errorf("truncated Avro payload")

func (r *avroReader) long() (int64, error) {
	var v uint64
	var shift uint
	for {
		if r.pos >= len(r.b) {
			return 0, errTruncated
		}
		c := r.b[r.pos]
		r.pos++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
		shift += 7
		if shift > 63 {
			return 0, fmt.Errorf("varint overflows a long")
		}
	}
	return int64(v>>1) ^ -int64(v&1), nil
}

func (r *avroReader) bytes(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.pos < n {
		return nil, errTruncated
	}
	out := r.b[r.pos : r.pos+n]
	r.pos += n
	return out, nil
}

func (r *avroReader) lenBytes() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(len(r.b)-r.pos) {
		return nil, errTruncated
	}
	return r.bytes(int(n))
}

// fieldError carries the path of the field an error happened in; the path
// is built while the error unwinds, so decoding builds no strings.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.err.Error()
	}
	return "field " + e.path + ": " + e.err.Error()
}

func (e *fieldError) Unwrap() error { return e.err }

// under prefixes err's field path with name ("" for a list element or map
// value, which add "[]" / "{}" themselves).
func under(name string, err error) error {
	fe, ok := err.(*fieldError)
	if !ok {
		return &fieldError{path: name, err: err}
	}
	switch {
	case fe.path == "":
		fe.path = name
	case strings.HasPrefix(fe.path, "[]") || strings.HasPrefix(fe.path, "{}"):
		fe.path = name + fe.path
	default:
		fe.path = name + "." + fe.path
	}
	return fe
}

// decode reads one value of node n. Byte slices are copied: the record's
// buffer is not kept.
func (r *avroReader) decode(n *avroNode) (any, error) {
	switch n.op {
	case aNull:
		return nil, nil
	case aBool, aInt, aDate, aTimeMillis, aLong, aTimeMicros, aTimestampMillis, aTimestampMicros, aLocalMillis, aLocalMicros, aFloat, aDouble:
		return r.number(n)
	case aBytes, aString, aUUID, aDecimalBytes, aDecimalFixed, aFixed, aEnum:
		return r.binary(n)
	case aRecord:
		return r.record(n)
	case aArray:
		return r.array(n)
	case aMap:
		return r.mapValue(n)
	case aOptional:
		return r.optional(n)
	case aUnion:
		return r.union(n)
	case aCut:
		return nil, fmt.Errorf("recursive type %s nests deeper than %d levels, Floe's limit", n.cutName, MaxRecursion)
	}
	return nil, fmt.Errorf("unknown Avro op %d", n.op)
}

// number reads a boolean, a number, or a date or time carried by one.
func (r *avroReader) number(n *avroNode) (any, error) {
	switch n.op {
	case aBool:
		b, err := r.bytes(1)
		if err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case aInt, aDate, aTimeMillis:
		v, err := r.long()
		if err != nil {
			return nil, err
		}
		if int64(int32(v)) != v {
			return nil, fmt.Errorf("%d does not fit an int", v)
		}
		switch n.op {
		case aDate:
			return records.Days(v), nil
		case aTimeMillis:
			return time.Duration(v) * time.Millisecond, nil
		}
		return int32(v), nil
	case aLong, aTimeMicros, aTimestampMillis, aTimestampMicros, aLocalMillis, aLocalMicros:
		v, err := r.long()
		if err != nil {
			return nil, err
		}
		switch n.op {
		case aTimeMicros:
			return time.Duration(v) * time.Microsecond, nil
		case aTimestampMillis, aLocalMillis:
			return time.UnixMilli(v).UTC(), nil
		case aTimestampMicros, aLocalMicros:
			return time.UnixMicro(v).UTC(), nil
		}
		return v, nil
	case aFloat:
		b, err := r.bytes(4)
		if err != nil {
			return nil, err
		}
		return float32frombits(b), nil
	case aDouble:
		b, err := r.bytes(8)
		if err != nil {
			return nil, err
		}
		return float64frombits(b), nil
	}
	return nil, fmt.Errorf("unknown Avro op %d", n.op)
}

// binary reads a length-prefixed or fixed-size value: bytes, a string, a
// UUID, a decimal, a fixed, or an enum symbol by index.
func (r *avroReader) binary(n *avroNode) (any, error) {
	if n.op == aEnum {
		i, err := r.long()
		if err != nil {
			return nil, err
		}
		if i < 0 || int(i) >= len(n.symbols) {
			return nil, fmt.Errorf("enum index %d out of range", i)
		}
		return n.symbols[i], nil
	}
	var (
		b   []byte
		err error
	)
	if n.op == aFixed || n.op == aDecimalFixed {
		b, err = r.bytes(n.size) // the size is the schema's
	} else {
		b, err = r.lenBytes() // the size comes first
	}
	if err != nil {
		return nil, err
	}
	switch n.op {
	case aBytes, aFixed:
		return append([]byte{}, b...), nil // b points into the record
	case aString:
		return string(b), nil
	case aUUID:
		u, err := uuid.ParseBytes(b)
		if err != nil {
			return nil, fmt.Errorf("%q is not a UUID", b)
		}
		return [16]byte(u), nil
	case aDecimalBytes, aDecimalFixed:
		return twosComplement(b), nil
	}
	return nil, fmt.Errorf("unknown Avro op %d", n.op)
}

// record reads a record's fields in order, dropping nulls and the fields
// the table does not keep.
func (r *avroReader) record(n *avroNode) (any, error) {
	out := make(map[string]any, len(n.fields))
	for _, f := range n.fields {
		v, err := r.decode(f.node)
		if err != nil {
			return nil, under(f.name, err)
		}
		if v != nil && f.keep {
			out[f.name] = v
		}
	}
	return out, nil
}

// array reads an array's blocks of items.
func (r *avroReader) array(n *avroNode) (any, error) {
	var out []any
	err := r.blocks(func() error {
		v, err := r.decode(n.elem)
		out = append(out, v)
		if err != nil {
			return under("[]", err)
		}
		return nil
	})
	if out == nil && err == nil {
		out = []any{}
	}
	return out, err
}

// mapValue reads a map's blocks of entries, in order.
func (r *avroReader) mapValue(n *avroNode) (any, error) {
	var out []records.MapEntry
	err := r.blocks(func() error {
		k, err := r.lenBytes()
		if err != nil {
			return err
		}
		v, err := r.decode(n.elem)
		out = append(out, records.MapEntry{Key: string(k), Value: v})
		if err != nil {
			return under("{}", err)
		}
		return nil
	})
	if out == nil && err == nil {
		out = []records.MapEntry{}
	}
	return out, err
}

// optional reads a union of null and one type.
func (r *avroReader) optional(n *avroNode) (any, error) {
	i, err := r.long()
	if err != nil {
		return nil, err
	}
	switch {
	case int(i) == n.nullIdx:
		return nil, nil
	case i == 0 || i == 1:
		return r.decode(n.elem)
	}
	return nil, fmt.Errorf("union branch %d out of range", i)
}

// union reads a general union as a one-field struct named by its branch.
func (r *avroReader) union(n *avroNode) (any, error) {
	i, err := r.long()
	if err != nil {
		return nil, err
	}
	if i < 0 || int(i) >= len(n.branches) {
		return nil, fmt.Errorf("union branch %d out of range", i)
	}
	if n.branches[i] == nil {
		return nil, nil // the null branch
	}
	v, err := r.decode(n.branches[i])
	if err != nil {
		return nil, under(n.names[i], err)
	}
	if v == nil {
		return nil, nil
	}
	return map[string]any{n.names[i]: v}, nil
}

// blocks reads an array or map: blocks of a count (a negative count is
// followed by the block's size in bytes) until a zero count.
func (r *avroReader) blocks(item func() error) error {
	for {
		n, err := r.long()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if n < 0 {
			n = -n
			if _, err := r.long(); err != nil {
				return err
			}
		}
		if n > int64(len(r.b)-r.pos) {
			return errTruncated // every item takes at least one byte
		}
		for range n {
			if err := item(); err != nil {
				return err
			}
		}
	}
}

// twosComplement reads a big-endian two's-complement integer.
func twosComplement(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	return v
}
