package delta

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"strings"

	"github.com/google/uuid"
)

// Deletion vector files ("Deletion Vector File Storage Format"): what
// Spark, Databricks and Trino read (Trino reads no inline DVs). Floe
// writes the new DVs of a commit into one file at the table root,
// deletion_vector_<uuid>.bin, put before the version that references them
// is published: a crash in between leaves an unreferenced file, which
// orphan cleanup deletes once it is old. The file is a version byte (1),
// then per DV its size (4 bytes, big endian), its RoaringBitmapArray and
// the CRC-32 (IEEE, big endian) of that array. A descriptor's offset is
// where its size field starts (1 for the first DV), as Spark's
// DeletionVectorStore writes and delta-kernel reads it.

const (
	dvFileVersion = 1
	dvFilePrefix  = "deletion_vector_"
	dvFileSuffix  = ".bin"
	// dvUUIDChars is the length of a Z85-encoded UUID: the end of a 'u'
	// descriptor's pathOrInlineDv, after an optional random prefix.
	dvUUIDChars = 20
	// MaxDVFileBytes caps a DV file read whole (one commit's DVs).
	MaxDVFileBytes = 1 << 30
)

// dvFileName is the DV file of id under the root.
func dvFileName(id uuid.UUID) string {
	return dvFilePrefix + id.String() + dvFileSuffix
}

// DVFile is the path, relative to the table root, of the file a 'u'
// descriptor points into: "<prefix>/deletion_vector_<uuid>.bin", without
// the prefix directory when pathOrInlineDv has none.
func DVFile(d *DeletionVector) (string, error) {
	if d == nil || d.StorageType != "u" {
		return "", fmt.Errorf("deletion vector of storageType %q has no relative file", d.storageType())
	}
	n := len(d.PathOrInlineDv)
	if n < dvUUIDChars {
		return "", fmt.Errorf("%w: deletion vector path %q is shorter than a UUID", ErrCorruptLog, d.PathOrInlineDv)
	}
	prefix, enc := d.PathOrInlineDv[:n-dvUUIDChars], d.PathOrInlineDv[n-dvUUIDChars:]
	raw, err := z85Decode(enc, 16)
	if err != nil {
		return "", fmt.Errorf("%w: deletion vector path %q: %v", ErrCorruptLog, d.PathOrInlineDv, err)
	}
	id, err := uuid.FromBytes(raw)
	if err != nil {
		return "", fmt.Errorf("%w: deletion vector path %q: %v", ErrCorruptLog, d.PathOrInlineDv, err)
	}
	if strings.Contains(prefix, "/") || strings.Contains(prefix, "..") {
		return "", fmt.Errorf("%w: deletion vector path prefix %q", ErrCorruptLog, prefix)
	}
	if prefix != "" {
		return prefix + "/" + dvFileName(id), nil
	}
	return dvFileName(id), nil
}

func (d *DeletionVector) storageType() string {
	if d == nil {
		return ""
	}
	return d.StorageType
}

// encodeDVFile lays out serialized DVs in one file and returns where each
// starts (its size field).
func encodeDVFile(bitmaps [][]byte) ([]byte, []int32, error) {
	n := 1
	for _, b := range bitmaps {
		n += 8 + len(b)
	}
	if n > MaxDVFileBytes {
		return nil, nil, fmt.Errorf("deletion vector file of %d bytes (limit %d)", n, MaxDVFileBytes)
	}
	out := make([]byte, 0, n)
	out = append(out, dvFileVersion)
	offsets := make([]int32, len(bitmaps))
	for i, b := range bitmaps {
		offsets[i] = int32(len(out))
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(b))
	}
	return out, offsets, nil
}

// decodeDVFile reads the DV of a descriptor (offset, sizeInBytes,
// cardinality) from the bytes of its file: the version byte, the size
// field at offset, which must equal sizeInBytes, the array and its CRC,
// and the rows, which must number cardinality. offset nil means 1, the
// first DV, as a reader treats an absent offset (where Spark's 0 would
// land on the version byte).
func decodeDVFile(file []byte, offset *int32, size int32, card int64) (*RowSet, error) {
	if len(file) < 1 || file[0] != dvFileVersion {
		return nil, errors.New("not a deletion vector file of format version 1")
	}
	start := int64(1)
	if offset != nil {
		start = int64(*offset)
	}
	if start < 1 || size < 0 || start+8+int64(size) > int64(len(file)) {
		return nil, fmt.Errorf("deletion vector of %d bytes at offset %d is past the end of the %d-byte file", size, start, len(file))
	}
	if got := binary.BigEndian.Uint32(file[start:]); int64(got) != int64(size) {
		return nil, fmt.Errorf("deletion vector at offset %d is %d bytes, its descriptor says %d", start, got, size)
	}
	data := file[start+4 : start+4+int64(size)]
	if got, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(file[start+4+int64(size):]); got != want {
		return nil, fmt.Errorf("deletion vector at offset %d: checksum %08x, the file says %08x", start, got, want)
	}
	r, err := UnmarshalRowSet(data)
	if err != nil {
		return nil, err
	}
	if got := r.Cardinality(); got != uint64(card) {
		return nil, fmt.Errorf("deletion vector at offset %d holds %d rows, its cardinality says %d", start, got, card)
	}
	return r, nil
}

// readDV reads the rows of a descriptor: inline, or from its file under
// the table root ('u'; files holds the files read so far by name, so a
// commit reads each once). Absolute paths ('p') Floe never writes and
// does not read.
func readDV(ctx context.Context, st Store, d *DeletionVector, files map[string][]byte) (*RowSet, error) {
	switch d.StorageType {
	case "i":
		return ReadInlineDV(d)
	case "u":
	default:
		return nil, fmt.Errorf("%w: deletion vector of storageType %q", ErrUnsupported, d.StorageType)
	}
	name, err := DVFile(d)
	if err != nil {
		return nil, err
	}
	data, ok := files[name]
	if !ok {
		if data, err = st.Get(ctx, name, MaxDVFileBytes); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: deletion vector file %s is missing: %v", ErrCorruptLog, name, err)
			}
			return nil, fmt.Errorf("reading deletion vector file %s: %w", name, err)
		}
		files[name] = data
	}
	r, err := decodeDVFile(data, d.Offset, d.SizeInBytes, d.Cardinality)
	if err != nil {
		return nil, fmt.Errorf("%w: deletion vector file %s: %v", ErrCorruptLog, name, err)
	}
	return r, nil
}

// ReadDV reads the rows of a descriptor of the log under st: what a test
// or a tool needs to see a table's deleted rows, whichever way they are
// stored.
func ReadDV(ctx context.Context, st Store, d *DeletionVector) (*RowSet, error) {
	return readDV(ctx, st, d, map[string][]byte{})
}
