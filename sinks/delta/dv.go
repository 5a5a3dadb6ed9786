package delta

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
)

// Deletion vectors ("Deletion Vectors", "Deletion Vector Format"): the
// rows of a data file an upsert table's later commits replaced or deleted.
// Floe writes them into DV files (storageType 'u', dvfile.go), the kind
// every reader reads (Trino reads no inline DVs), and reads inline ones
// ('i') too: an older Floe wrote those, and Options.InlineDVs still does
// (docs/formats.md). This file holds the descriptor and the bitmap.

// DeletionVector is the deletionVector descriptor of an add or remove.
type DeletionVector struct {
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	Offset         *int32 `json:"offset,omitempty"`
	SizeInBytes    int32  `json:"sizeInBytes"`
	Cardinality    int64  `json:"cardinality"`
}

// UniqueID is the DV's derived uniqueId: what tells two DVs of one file
// apart in replay ("Derived Fields").
func (d *DeletionVector) UniqueID() string {
	if d == nil {
		return ""
	}
	id := d.StorageType + d.PathOrInlineDv
	if d.Offset != nil {
		id += "@" + strconv.FormatInt(int64(*d.Offset), 10)
	}
	return id
}

// check refuses a descriptor no reader could resolve.
func (d *DeletionVector) check() error {
	switch {
	case d.StorageType != "u" && d.StorageType != "i" && d.StorageType != "p":
		return fmt.Errorf("deletion vector storageType %q", d.StorageType)
	case d.PathOrInlineDv == "":
		return fmt.Errorf("deletion vector without pathOrInlineDv")
	case d.StorageType == "i" && d.Offset != nil:
		return fmt.Errorf("inline deletion vector with an offset")
	case d.Offset != nil && *d.Offset < 0, d.SizeInBytes < 0, d.Cardinality < 0:
		return fmt.Errorf("deletion vector with a negative offset, size or cardinality")
	}
	return nil
}

// dvMagic starts every serialized RoaringBitmapArray.
const dvMagic = 1681511377

// RowSet is a set of row positions of one data file: a 64-bit roaring
// bitmap as the portable format lays it out, 32-bit bitmaps by their
// high 32 bits (ascending keys, none empty).
type RowSet struct {
	keys    []uint32
	buckets []*roaring.Bitmap
}

// Add puts position pos (>= 0) in the set.
func (r *RowSet) Add(pos int64) {
	hi, lo := uint32(uint64(pos)>>32), uint32(pos)
	i, found := slices.BinarySearch(r.keys, hi)
	if !found {
		r.keys = slices.Insert(r.keys, i, hi)
		r.buckets = slices.Insert(r.buckets, i, roaring.New())
	}
	r.buckets[i].Add(lo)
}

// Union adds every position of o.
func (r *RowSet) Union(o *RowSet) {
	for j, k := range o.keys {
		i, found := slices.BinarySearch(r.keys, k)
		if !found {
			r.keys = slices.Insert(r.keys, i, k)
			r.buckets = slices.Insert(r.buckets, i, o.buckets[j].Clone())
			continue
		}
		r.buckets[i].Or(o.buckets[j])
	}
}

// Contains reports whether pos is in the set.
func (r *RowSet) Contains(pos int64) bool {
	i, found := slices.BinarySearch(r.keys, uint32(uint64(pos)>>32))
	return found && r.buckets[i].Contains(uint32(pos))
}

// Cardinality is the number of positions.
func (r *RowSet) Cardinality() uint64 {
	var n uint64
	for _, b := range r.buckets {
		n += b.GetCardinality()
	}
	return n
}

// MarshalBinary serializes the set as the spec's RoaringBitmapArray: the
// magic number, then the portable 64-bit format (bucket count, then per
// bucket its key and its 32-bit bitmap in the portable format), little
// endian.
func (r *RowSet) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	buf.Write(binary.LittleEndian.AppendUint32(nil, dvMagic))
	buf.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(r.keys))))
	for i, k := range r.keys {
		buf.Write(binary.LittleEndian.AppendUint32(nil, k))
		b := r.buckets[i].Clone()
		b.RunOptimize()
		if _, err := b.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("serializing deletion vector bucket %d: %w", k, err)
		}
	}
	return buf.Bytes(), nil
}

// UnmarshalRowSet reads a serialized RoaringBitmapArray. Every byte must
// belong to it; keys must ascend and keep their top bit clear (the spec's
// addition for Java's signed reads).
func UnmarshalRowSet(b []byte) (_ *RowSet, err error) {
	if len(b) < 12 || binary.LittleEndian.Uint32(b) != dvMagic {
		return nil, fmt.Errorf("deletion vector: no RoaringBitmapArray magic number")
	}
	n := binary.LittleEndian.Uint64(b[4:])
	rest := b[12:]
	// A bucket takes at least its key and an 8-byte 32-bit header.
	if n > uint64(len(rest))/12 {
		return nil, fmt.Errorf("deletion vector: %d buckets in %d bytes", n, len(rest))
	}
	r := &RowSet{}
	for i := range n {
		if len(rest) < 4 {
			return nil, fmt.Errorf("deletion vector: bucket %d truncated", i)
		}
		k := binary.LittleEndian.Uint32(rest)
		if k&(1<<31) != 0 || (len(r.keys) > 0 && k <= r.keys[len(r.keys)-1]) {
			return nil, fmt.Errorf("deletion vector: bucket key %d out of order or negative", k)
		}
		bm, used, err := readBucket(rest[4:])
		if err != nil {
			return nil, fmt.Errorf("deletion vector: bucket %d: %w", k, err)
		}
		rest = rest[4+used:]
		if bm.IsEmpty() {
			continue
		}
		r.keys, r.buckets = append(r.keys, k), append(r.buckets, bm)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("deletion vector: %d bytes after the last bucket", len(rest))
	}
	return r, nil
}

// readBucket reads one portable 32-bit bitmap and checks it: roaring's
// reader trusts its input, so a malformed one is refused here, and a
// panic in it is an error, not a crash of the reader.
func readBucket(b []byte) (bm *roaring.Bitmap, used int, err error) {
	defer func() {
		if p := recover(); p != nil {
			bm, used, err = nil, 0, fmt.Errorf("malformed roaring bitmap: %v", p)
		}
	}()
	bm = roaring.New()
	rd := bytes.NewReader(b)
	n, err := bm.ReadFrom(rd)
	if err != nil {
		return nil, 0, fmt.Errorf("malformed roaring bitmap: %w", err)
	}
	if n <= 0 || n > int64(len(b)) || int64(len(b))-n != int64(rd.Len()) {
		return nil, 0, fmt.Errorf("roaring bitmap claims %d of %d bytes", n, len(b))
	}
	if err := bm.Validate(); err != nil {
		return nil, 0, fmt.Errorf("malformed roaring bitmap: %w", err)
	}
	return bm, int(n), nil
}

// InlineDV is the inline descriptor of r.
func InlineDV(r *RowSet) (*DeletionVector, error) {
	b, err := r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if len(b) > 1<<31-1 {
		return nil, fmt.Errorf("deletion vector of %d bytes", len(b))
	}
	return &DeletionVector{StorageType: "i", PathOrInlineDv: z85Encode(b), SizeInBytes: int32(len(b)),
		Cardinality: int64(r.Cardinality())}, nil
}

// ReadInlineDV decodes an inline descriptor's rows and checks its size
// and cardinality. A DV in a file needs the table's store (ReadDV).
func ReadInlineDV(d *DeletionVector) (*RowSet, error) {
	if d.StorageType != "i" {
		return nil, fmt.Errorf("%w: deletion vector of storageType %q is not inline (read it with ReadDV)", ErrUnsupported, d.StorageType)
	}
	b, err := z85Decode(d.PathOrInlineDv, int(d.SizeInBytes))
	if err != nil {
		return nil, fmt.Errorf("%w: inline deletion vector: %v", ErrCorruptLog, err)
	}
	r, err := UnmarshalRowSet(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptLog, err)
	}
	if got := r.Cardinality(); got != uint64(d.Cardinality) {
		return nil, fmt.Errorf("%w: inline deletion vector holds %d rows, its cardinality says %d", ErrCorruptLog, got, d.Cardinality)
	}
	return r, nil
}
