package deltaview

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

// Deletion vectors read from the protocol ("Deletion Vector Format") and
// the Roaring format spec, apart from sinks/delta's encoder: Z85, the
// portable 64-bit RoaringBitmapArray and the 32-bit containers; inline
// ('i') and in files relative to the table root ('u'); others ('p') fail
// the test.

// DV is an add's or remove's deletionVector.
type DV struct {
	StorageType    string
	PathOrInlineDv string
	Offset         *int32
	SizeInBytes    int32
	Cardinality    int64
}

// uniqueID is the DV's derived uniqueId ("Derived Fields"); "" for none.
func (d *DV) uniqueID() string {
	if d == nil {
		return ""
	}
	if d.Offset != nil {
		return fmt.Sprintf("%s%s@%d", d.StorageType, d.PathOrInlineDv, *d.Offset)
	}
	return d.StorageType + d.PathOrInlineDv
}

// Rows decodes an inline DV's deleted row positions; a DV in a file
// needs the table root (RowsAt).
func (d *DV) Rows() (map[int64]bool, error) { return d.RowsAt("") }

// RowsAt decodes a DV's deleted row positions: inline, or ('u') from its
// file under the table root root, as the protocol lays it out
// ("Deletion Vector File Storage Format"): a version byte 1, then at the
// descriptor's offset a big-endian size, the bitmap and its big-endian
// CRC-32.
func (d *DV) RowsAt(root string) (map[int64]bool, error) {
	var raw []byte
	switch d.StorageType {
	case "i":
		var err error
		if raw, err = z85(d.PathOrInlineDv); err != nil {
			return nil, err
		}
		if int(d.SizeInBytes) > len(raw) {
			return nil, fmt.Errorf("deletion vector of %d bytes in %d", d.SizeInBytes, len(raw))
		}
		raw = raw[:d.SizeInBytes]
	case "u":
		var err error
		if raw, err = d.fromFile(root); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("deletion vector of storageType %q", d.StorageType)
	}
	rows, err := roaringArray(raw)
	if err == nil && int64(len(rows)) != d.Cardinality {
		err = fmt.Errorf("deletion vector holds %d rows, cardinality %d", len(rows), d.Cardinality)
	}
	return rows, err
}

// fromFile reads a 'u' DV's bitmap from <root>/<prefix>/deletion_vector_<uuid>.bin.
func (d *DV) fromFile(root string) ([]byte, error) {
	p := d.PathOrInlineDv
	if root == "" || len(p) < 20 {
		return nil, fmt.Errorf("deletion vector %q in a file, no table root or no UUID", p)
	}
	id, err := z85(p[len(p)-20:])
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("deletion_vector_%x-%x-%x-%x-%x.bin", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
	file, err := os.ReadFile(filepath.Join(root, p[:len(p)-20], name))
	if err != nil {
		return nil, err
	}
	off := int64(1)
	if d.Offset != nil {
		off = int64(*d.Offset)
	}
	end := off + 4 + int64(d.SizeInBytes) + 4
	switch {
	case len(file) == 0 || file[0] != 1:
		return nil, fmt.Errorf("%s: not a version 1 deletion vector file", name)
	case off < 1 || end > int64(len(file)):
		return nil, fmt.Errorf("%s: deletion vector at %d of %d bytes past the end", name, off, d.SizeInBytes)
	case binary.BigEndian.Uint32(file[off:]) != uint32(d.SizeInBytes):
		return nil, fmt.Errorf("%s: size at %d is %d, the log says %d", name, off, binary.BigEndian.Uint32(file[off:]), d.SizeInBytes)
	}
	data := file[off+4 : end-4]
	if crc32.ChecksumIEEE(data) != binary.BigEndian.Uint32(file[end-4:]) {
		return nil, fmt.Errorf("%s: deletion vector at %d fails its checksum", name, off)
	}
	return data, nil
}

// z85 decodes Z85 text (a multiple of 5 characters).
func z85(s string) ([]byte, error) {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
	var raw []byte
	for i := 0; i+5 <= len(s); i += 5 {
		var v uint32
		for _, c := range []byte(s[i : i+5]) {
			idx := strings.IndexByte(alphabet, c)
			if idx < 0 {
				return nil, fmt.Errorf("z85 character %q", c)
			}
			v = v*85 + uint32(idx)
		}
		raw = binary.BigEndian.AppendUint32(raw, v)
	}
	return raw, nil
}

// rd reads little-endian integers, failing once past the end.
type rd struct {
	b   []byte
	err error
}

func (r *rd) next(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = fmt.Errorf("deletion vector truncated")
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *rd) u16() uint16 { return binary.LittleEndian.Uint16(r.next(2)) }
func (r *rd) u32() uint32 { return binary.LittleEndian.Uint32(r.next(4)) }

// roaringArray reads magic 1681511377, a 64-bit bucket count, then per
// bucket a 32-bit key and a 32-bit roaring bitmap.
func roaringArray(b []byte) (map[int64]bool, error) {
	r := &rd{b: b}
	if m := r.u32(); m != 1681511377 {
		return nil, fmt.Errorf("deletion vector magic %d", m)
	}
	lo, hi := r.u32(), r.u32()
	n := uint64(hi)<<32 | uint64(lo)
	out := map[int64]bool{}
	for i := uint64(0); i < n && r.err == nil; i++ {
		key := int64(r.u32())
		roaring32(r, func(v uint32) { out[key<<32|int64(v)] = true })
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the deletion vector", len(r.b))
	}
	return out, r.err
}

// roaring32 reads one bitmap of the Roaring format spec, calling add for
// each value.
func roaring32(r *rd, add func(uint32)) {
	cookie := r.u32()
	var size int
	var runs []byte
	switch {
	case cookie&0xFFFF == 12347:
		size = int(cookie>>16) + 1
		runs = r.next((size + 7) / 8)
	case cookie == 12346:
		size = int(r.u32())
	default:
		r.err = fmt.Errorf("roaring cookie %d", cookie)
		return
	}
	keys, cards := make([]uint32, size), make([]int, size)
	for i := range size {
		keys[i], cards[i] = uint32(r.u16()), int(r.u16())+1
	}
	if runs == nil || size >= 4 {
		r.next(4 * size) // container offsets
	}
	for i := 0; i < size && r.err == nil; i++ {
		base := keys[i] << 16
		switch {
		case runs != nil && runs[i/8]&(1<<(i%8)) != 0:
			for range int(r.u16()) {
				start, length := uint32(r.u16()), uint32(r.u16())
				for v := start; v <= start+length; v++ {
					add(base | v)
				}
			}
		case cards[i] > 4096:
			words := r.next(8192)
			for w := range 1024 {
				x := binary.LittleEndian.Uint64(words[8*w:])
				for bit := range 64 {
					if x&(1<<bit) != 0 {
						add(base | uint32(w*64+bit))
					}
				}
			}
		default:
			for range cards[i] {
				add(base | uint32(r.u16()))
			}
		}
	}
}
