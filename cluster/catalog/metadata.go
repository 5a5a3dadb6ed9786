package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/metaloc"
)

// MaxMetadataBytes bounds a metadata file as read, after decompression: a
// file (or a gzip bomb) larger is refused before it can exhaust memory. A
// table at the 500-snapshot default cap writes ~450 KB; 64 MiB leaves room
// for tables of thousands of snapshots and wide schemas.
const MaxMetadataBytes = 64 << 20

// ErrMetadataTooLarge: a metadata file decompresses past MaxMetadataBytes.
var ErrMetadataTooLarge = errors.New("metadata file larger than the limit")

// writeMetadata writes meta as version v of its table and returns where.
//
// A table whose write.metadata.compression-codec is gzip gets a gzip file
// named <v>-<uuid>.gz.metadata.json, as the spec names it: every file
// repeats the retained snapshots, so at one commit per 10 s the plain JSON
// outweighs the data a quiet table writes (docs/benchmarks.md, "Many quiet
// tables"); gzip makes it about 8x smaller. Only once every member of the
// group reads gzip (fsm.ProtocolGzipMetadata): until then the file is plain
// JSON, whatever the property says.
func (c *Catalog) writeMetadata(ctx context.Context, meta table.Metadata, v int) (string, error) {
	gz := wantsGzip(meta.Properties()) && c.groupReadsGzip()
	loc, err := metadataLocation(meta, v, gz)
	if err != nil {
		return "", err
	}
	fs, err := c.fsF(loc)(ctx)
	if err != nil {
		return "", fmt.Errorf("opening storage for %s: %w", loc, err)
	}
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("storage for %s is read-only", loc)
	}
	data, err := json.Marshal(meta)
	if err != nil {
		return "", fmt.Errorf("encoding metadata: %w", err)
	}
	if gz {
		if data, err = gzipBytes(data); err != nil {
			return "", fmt.Errorf("compressing metadata: %w", err)
		}
	}
	if err := wfs.WriteFile(loc, data); err != nil {
		return "", fmt.Errorf("writing metadata %s: %w", loc, err)
	}
	return loc, nil
}

// wantsGzip reports whether a table's properties ask for gzip metadata.
func wantsGzip(props iceberg.Properties) bool {
	return strings.EqualFold(props[table.MetadataCompressionKey], table.MetadataCompressionCodecGzip)
}

// groupReadsGzip reports whether every registered member reads gzip
// metadata files.
func (c *Catalog) groupReadsGzip() bool {
	ok := false
	c.readState(func(s *fsm.State) { ok = s.MinProtocol() >= fsm.ProtocolGzipMetadata })
	return ok
}

// metadataLocation names version v of meta's metadata file, with the gzip
// suffix when gz, through the table's location provider.
func metadataLocation(meta table.Metadata, v int, gz bool) (string, error) {
	props := make(iceberg.Properties, len(meta.Properties())+1)
	for k, val := range meta.Properties() {
		props[k] = val
	}
	props[table.MetadataCompressionKey] = table.MetadataCompressionCodecNone
	if gz {
		props[table.MetadataCompressionKey] = table.MetadataCompressionCodecGzip
	}
	provider, err := table.LoadLocationProvider(meta.Location(), props)
	if err != nil {
		return "", fmt.Errorf("locating metadata: %w", err)
	}
	loc, err := provider.NewTableMetadataFileLocation(v)
	if err != nil {
		return "", fmt.Errorf("locating metadata: %w", err)
	}
	return loc, nil
}

// gzipWriters reuses compressors: a new one allocates ~1 MB of tables,
// which at one metadata file per table per interval was a visible share of
// the allocation rate.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := kgzip.NewWriterLevel(nil, kgzip.BestSpeed)
	return w
}}

// gzipBytes compresses data at the fastest level: metadata JSON compresses
// 7-8x at it, within 5% of the default level's ratio at twice its speed.
func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/6 + 64)
	w := gzipWriters.Get().(*kgzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ParseMetadata parses a metadata file's bytes, compressed or not (see
// PlainMetadata), bounded by MaxMetadataBytes.
func ParseMetadata(data []byte) (table.Metadata, error) {
	plain, err := PlainMetadata(data)
	if err != nil {
		return nil, err
	}
	return table.ParseMetadataBytes(plain)
}

// PlainMetadata is a metadata file's JSON: gzip-compressed files are told by
// their magic bytes, not their name, so a file renamed or written under
// Java's alternative name (.metadata.json.gz) reads as well. The JSON, plain
// or decompressed, is bounded by MaxMetadataBytes so a gzip bomb is refused
// before it can exhaust memory.
func PlainMetadata(data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		if len(data) > MaxMetadataBytes {
			return nil, fmt.Errorf("metadata of %d bytes: %w (%d bytes)", len(data), ErrMetadataTooLarge, MaxMetadataBytes)
		}
		return data, nil
	}
	r, err := kgzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompressing metadata: %w", err)
	}
	defer r.Close()
	plain, err := io.ReadAll(io.LimitReader(r, MaxMetadataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("decompressing metadata: %w", err)
	}
	if len(plain) > MaxMetadataBytes {
		return nil, fmt.Errorf("decompressing metadata: %w (%d bytes)", ErrMetadataTooLarge, MaxMetadataBytes)
	}
	return plain, nil
}

// MetadataVersion returns the version number in a metadata file's name
// (<v>-<uuid>.metadata.json, or .gz.metadata.json), -1 when it has none.
func MetadataVersion(loc string) int { return metaloc.Version(loc) }

// remember caches meta as the version of its table at loc.
func (c *Catalog) remember(loc string, meta table.Metadata) { c.cache.put(loc, meta) }

func (c *Catalog) metadataAt(ctx context.Context, loc string) (table.Metadata, error) {
	if meta, ok := c.cache.get(loc); ok {
		return meta, nil
	}
	fs, err := c.fsF(loc)(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening storage for %s: %w", loc, err)
	}
	data, err := ReadFile(fs, loc)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	meta, err := ParseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("parsing metadata %s: %w", loc, err)
	}
	c.remember(loc, meta)
	return meta, nil
}

// ReadFile reads the file at loc through fsys, which must be able to read
// whole files (iceberg-go's local, S3, GCS and Azure IO can). Recovery reads
// the metadata it walks through it too.
func ReadFile(fsys icebergio.IO, loc string) ([]byte, error) {
	rfs, ok := fsys.(icebergio.ReadFileIO)
	if !ok {
		return nil, fmt.Errorf("storage for %s cannot read files", loc)
	}
	data, err := rfs.ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", loc, err)
	}
	return data, nil
}
