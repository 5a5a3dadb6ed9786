package schemas

import (
	"encoding/binary"
	"fmt"
)

// magic is the first byte of every record in the Confluent wire format.
const magic = 0

// header splits a Confluent-framed payload into schema id and body.
func header(b []byte) (id int, body []byte, err error) {
	if len(b) < 5 {
		return 0, nil, fmt.Errorf("%w: %d bytes, the header alone takes 5", ErrWireFormat, len(b))
	}
	if b[0] != magic {
		return 0, nil, fmt.Errorf("%w: magic byte is %d, not 0", ErrWireFormat, b[0])
	}
	return int(binary.BigEndian.Uint32(b[1:5])), b[5:], nil
}

// messageIndexes reads the Protobuf message indexes that follow the schema
// id: a zigzag varint count, then that many zigzag varint indexes into the
// nested message declarations. A count of 0 stands for [0], the first
// message of the file.
func messageIndexes(b []byte) ([]int, []byte, error) {
	n, w := binary.Varint(b)
	if w <= 0 || n < 0 || n > 64 {
		return nil, nil, fmt.Errorf("%w: bad Protobuf message index count", ErrWireFormat)
	}
	b = b[w:]
	if n == 0 {
		return []int{0}, b, nil
	}
	out := make([]int, n)
	for i := range out {
		v, w := binary.Varint(b)
		if w <= 0 || v < 0 {
			return nil, nil, fmt.Errorf("%w: bad Protobuf message index", ErrWireFormat)
		}
		out[i], b = int(v), b[w:]
	}
	return out, b, nil
}

// AppendHeader frames a payload in the wire format: for producers (tests,
// benchmarks, the demo). indexes is only for Protobuf (nil for others).
func AppendHeader(dst []byte, id int, indexes []int) []byte {
	dst = append(dst, magic)
	dst = binary.BigEndian.AppendUint32(dst, uint32(id))
	if indexes == nil {
		return dst
	}
	if len(indexes) == 1 && indexes[0] == 0 {
		return binary.AppendVarint(dst, 0)
	}
	dst = binary.AppendVarint(dst, int64(len(indexes)))
	for _, i := range indexes {
		dst = binary.AppendVarint(dst, int64(i))
	}
	return dst
}
