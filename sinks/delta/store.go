package delta

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"gocloud.dev/blob"
)

// Store is the table root as the log writer sees it: names are relative to
// the root ("_delta_log/00000000000000000000.json").
type Store interface {
	// Get reads a whole file of at most limit bytes; a missing file is an
	// error satisfying errors.Is(err, fs.ErrNotExist), a larger one
	// ErrCorruptLog.
	Get(ctx context.Context, name string, limit int64) ([]byte, error)
	// PutIfAbsent creates the file with data unless it exists
	// (ErrVersionExists); readers never see it partly written.
	PutIfAbsent(ctx context.Context, name string, data []byte) error
	// Put creates or replaces the file atomically.
	Put(ctx context.Context, name string, data []byte) error
	// List returns the base names of the files directly in dir (no
	// trailing slash) that sort after startAfter, in order.
	List(ctx context.Context, dir, startAfter string) ([]string, error)
	// Delete removes a file; a missing one is no error.
	Delete(ctx context.Context, name string) error
}

// OpenStore opens the table root location: a local directory (file:// or
// a plain path) directly, anything else through iceberg-go's file IO for
// its scheme (props are the warehouse's IO properties, as the catalog of
// record uses them), which must be a gocloud bucket (s3://).
func OpenStore(ctx context.Context, location string, props map[string]string) (Store, error) {
	if strings.HasPrefix(location, "file://") || strings.HasPrefix(location, "/") {
		return LocalStore(canonical(location)), nil
	}
	fsys, err := icebergio.LoadFS(ctx, props, location)
	if err != nil {
		return nil, fmt.Errorf("opening storage of delta table %s: %w", location, err)
	}
	var bucket *blob.Bucket
	switch f := fsys.(type) {
	case *blobfs.FileIO:
		bucket = f.Bucket
	case bucketIO:
		bucket = f.BlobBucket()
	}
	if bucket == nil {
		return nil, fmt.Errorf("%w: storage of %s (%T) is neither local nor a bucket", ErrUnsupported, location, fsys)
	}
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("parsing table location %s: %w", location, err)
	}
	return BlobStore(bucket, strings.Trim(u.Path, "/")), nil
}

// bucketIO is a FileIO that wraps a gocloud bucket and names it: the
// node's S3 FileIO (internal/objstore), which wraps iceberg-go's to count
// requests and read small objects whole, so a type assertion on
// *blobfs.FileIO alone does not find the bucket.
type bucketIO interface {
	BlobBucket() *blob.Bucket
}

// LocalStore is a table root on the local file system.
type LocalStore string

func (s LocalStore) path(name string) string {
	return filepath.Join(string(s), filepath.FromSlash(name))
}

// Get implements Store.
func (s LocalStore) Get(_ context.Context, name string, limit int64) ([]byte, error) {
	f, err := os.Open(s.path(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, name, limit)
}

func readLimited(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrCorruptLog, name, limit)
	}
	return b, nil
}

// PutIfAbsent implements Store: the data goes to a hidden temporary file
// first, which is then hard-linked to the name. link(2) fails when the
// name exists, so of two writers exactly one wins, and the file appears
// whole (a crash leaves at most a temporary file, which readers ignore).
func (s LocalStore) PutIfAbsent(_ context.Context, name string, data []byte) error {
	tmp, err := s.writeTemp(name, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, s.path(name)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrVersionExists, name)
		}
		return fmt.Errorf("publishing %s: %w", name, err)
	}
	return syncDir(filepath.Dir(s.path(name)))
}

// Put implements Store: write aside, then rename (atomic locally).
func (s LocalStore) Put(_ context.Context, name string, data []byte) error {
	tmp, err := s.writeTemp(name, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path(name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return syncDir(filepath.Dir(s.path(name)))
}

func (s LocalStore) writeTemp(name string, data []byte) (string, error) {
	dir := filepath.Dir(s.path(name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return f.Name(), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// List implements Store.
func (s LocalStore) List(_ context.Context, dir, startAfter string) ([]string, error) {
	ents, err := os.ReadDir(s.path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && e.Name() > startAfter {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Delete implements Store.
func (s LocalStore) Delete(_ context.Context, name string) error {
	if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	return nil
}
