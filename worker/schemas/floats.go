package schemas

import (
	"encoding/binary"
	"math"
)

// Avro floats and doubles are little-endian IEEE 754.
func float32frombits(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func float64frombits(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
