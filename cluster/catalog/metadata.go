package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/floe-io/floe/internal/metaloc"
)

// writeMetadata writes meta as version v of its table and returns where.
func (c *Catalog) writeMetadata(ctx context.Context, meta table.Metadata, v int) (string, error) {
	provider, err := table.LoadLocationProvider(meta.Location(), meta.Properties())
	if err != nil {
		return "", fmt.Errorf("locating metadata: %w", err)
	}
	loc, err := provider.NewTableMetadataFileLocation(v)
	if err != nil {
		return "", fmt.Errorf("locating metadata: %w", err)
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
	if err := wfs.WriteFile(loc, data); err != nil {
		return "", fmt.Errorf("writing metadata %s: %w", loc, err)
	}
	return loc, nil
}

// MetadataVersion returns the version number in a metadata file's name
// (<v>-<uuid>.metadata.json), -1 when it has none.
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
	meta, err := table.ParseMetadataBytes(data)
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
