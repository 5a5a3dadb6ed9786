package delta

import "fmt"

// Z85 (ZeroMQ RFC 32) is the base85 variant Delta uses for deletion
// vectors in the log ("Deletion Vector Descriptor Schema"): inline DVs and
// the UUIDs of DV files. Delta pads unaligned input with zero bytes to a
// multiple of 4 and records the unpadded size (sizeInBytes), so the
// decoder takes the length to keep.

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Value maps a character to its digit; -1 for characters not in Z85.
var z85Value = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = int8(i)
	}
	return t
}()

// z85Encode encodes b, zero-padded to a multiple of 4 bytes.
func z85Encode(b []byte) string {
	out := make([]byte, 0, (len(b)+3)/4*5)
	for i := 0; i < len(b); i += 4 {
		var w uint32
		for j := range 4 {
			w <<= 8
			if i+j < len(b) {
				w |= uint32(b[i+j])
			}
		}
		var chunk [5]byte
		for j := 4; j >= 0; j-- {
			chunk[j] = z85Alphabet[w%85]
			w /= 85
		}
		out = append(out, chunk[:]...)
	}
	return string(out)
}

// z85Decode decodes s to its first n bytes. s must be exactly the
// encoding of n bytes padded to a multiple of 4, and the padding zero.
func z85Decode(s string, n int) ([]byte, error) {
	if n < 0 || len(s) != (n+3)/4*5 {
		return nil, fmt.Errorf("z85: %d characters cannot hold %d bytes", len(s), n)
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var w uint64
		for j := range 5 {
			d := z85Value[s[i+j]]
			if d < 0 {
				return nil, fmt.Errorf("z85: character %q at %d", s[i+j], i+j)
			}
			w = w*85 + uint64(d)
		}
		if w > 0xFFFFFFFF {
			return nil, fmt.Errorf("z85: group %q at %d overflows 32 bits", s[i:i+5], i)
		}
		out = append(out, byte(w>>24), byte(w>>16), byte(w>>8), byte(w))
	}
	for _, p := range out[n:] {
		if p != 0 {
			return nil, fmt.Errorf("z85: non-zero padding")
		}
	}
	return out[:n], nil
}
