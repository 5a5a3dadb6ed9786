package delta

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// bucketStore is a table root in an object store bucket (gocloud), as
// iceberg-go's s3:// file IO reaches it.
type bucketStore struct {
	b      *blob.Bucket
	prefix string // the root's key, without a trailing slash
}

// BlobStore is a table root under prefix in a gocloud bucket.
func BlobStore(b *blob.Bucket, prefix string) Store {
	return bucketStore{b: b, prefix: strings.Trim(prefix, "/")}
}

func (s bucketStore) key(name string) string {
	if s.prefix == "" {
		return name
	}
	return s.prefix + "/" + name
}

// Get implements Store.
func (s bucketStore) Get(ctx context.Context, name string, limit int64) ([]byte, error) {
	r, err := s.b.NewReader(ctx, s.key(name), nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("reading %s: %w", name, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	defer r.Close()
	return readLimited(r, name, limit)
}

// PutIfAbsent implements Store with a conditional write: on S3 the PUT
// carries If-None-Match: *, so the store refuses it (412) when the key
// exists, atomically, whoever else is writing.
func (s bucketStore) PutIfAbsent(ctx context.Context, name string, data []byte) error {
	err := s.b.WriteAll(ctx, s.key(name), data, &blob.WriterOptions{IfNotExist: true, ContentType: contentType(name)})
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return fmt.Errorf("%w: %s", ErrVersionExists, name)
	}
	if err != nil {
		return fmt.Errorf("publishing %s: %w", name, err)
	}
	return nil
}

// Put implements Store: an object PUT replaces atomically.
func (s bucketStore) Put(ctx context.Context, name string, data []byte) error {
	if err := s.b.WriteAll(ctx, s.key(name), data, &blob.WriterOptions{ContentType: contentType(name)}); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

func contentType(name string) string {
	if strings.HasSuffix(name, ".parquet") {
		return "application/octet-stream"
	}
	return "application/json"
}

// List implements Store. On S3 the listing starts after startAfter
// (StartAfter), so reading a log's tail costs the tail, not the log.
func (s bucketStore) List(ctx context.Context, dir, startAfter string) ([]string, error) {
	prefix := s.key(dir) + "/"
	it := s.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/", BeforeList: func(as func(any) bool) error {
		var in *s3.ListObjectsV2Input
		if startAfter != "" && as(&in) {
			in.StartAfter = aws.String(prefix + startAfter)
		}
		return nil
	}})
	var out []string
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
		name := strings.TrimPrefix(obj.Key, prefix)
		if obj.IsDir || name == "" || strings.Contains(name, "/") || name <= startAfter {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

// Delete implements Store.
func (s bucketStore) Delete(ctx context.Context, name string) error {
	if err := s.b.Delete(ctx, s.key(name)); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("deleting %s: %w", name, err)
	}
	return nil
}
