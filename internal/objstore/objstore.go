package objstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	icebergio "github.com/apache/iceberg-go/io"
	icebergs3 "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/utils"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

// Counts are requests by S3 billing class.
type Counts struct {
	Put    int64 `json:"put"`    // PUT, COPY, POST (multipart steps)
	Get    int64 `json:"get"`    // GET, HEAD
	List   int64 `json:"list"`   // LIST
	Delete int64 `json:"delete"` // DELETE, batch deletes and aborted uploads
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Put, c.Get, c.List, c.Delete = c.Put+o.Put, c.Get+o.Get, c.List+o.List, c.Delete+o.Delete
}

var (
	mu     sync.Mutex
	counts = map[string]*Counts{} // "bucket/table root" -> counts
	once   sync.Once
)

// Install makes every s3:// FileIO opened from now on count its requests.
// It is idempotent; the node calls it before it opens the warehouse.
func Install() {
	once.Do(func() {
		icebergio.Unregister("s3")
		icebergio.Register("s3", countingFactory)
	})
}

// countingFactory opens an s3:// location as iceberg-go would, with the
// counting middleware on its client. iceberg-go's factory takes its base
// AWS configuration from the context when one is there; the one given is
// the configuration it would have loaded from props itself.
func countingFactory(ctx context.Context, parsed *url.URL, props map[string]string) (icebergio.IO, error) {
	cfg, err := icebergs3.ParseAWSConfig(ctx, props)
	if err != nil {
		return nil, fmt.Errorf("s3 configuration for %s: %w", parsed.Redacted(), err)
	}
	cfg.APIOptions = append(cfg.APIOptions, addCounter)
	alias := *parsed
	alias.Scheme = "s3a" // the same factory, still registered; paths keep s3://
	return icebergio.LoadFS(utils.WithAwsConfig(ctx, cfg), props, alias.String())
}

func addCounter(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("FloeCountRequests",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if c, bucket, key, ok := classify(in.Parameters); ok {
				record(bucket, key, c)
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// classify is an operation's billing class, bucket and key.
func classify(p any) (Counts, string, string, bool) {
	s := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	switch in := p.(type) {
	case *s3.PutObjectInput:
		return Counts{Put: 1}, s(in.Bucket), s(in.Key), true
	case *s3.CreateMultipartUploadInput:
		return Counts{Put: 1}, s(in.Bucket), s(in.Key), true
	case *s3.UploadPartInput:
		return Counts{Put: 1}, s(in.Bucket), s(in.Key), true
	case *s3.CompleteMultipartUploadInput:
		return Counts{Put: 1}, s(in.Bucket), s(in.Key), true
	case *s3.CopyObjectInput:
		return Counts{Put: 1}, s(in.Bucket), s(in.Key), true
	case *s3.GetObjectInput:
		return Counts{Get: 1}, s(in.Bucket), s(in.Key), true
	case *s3.HeadObjectInput:
		return Counts{Get: 1}, s(in.Bucket), s(in.Key), true
	case *s3.ListObjectsV2Input:
		return Counts{List: 1}, s(in.Bucket), s(in.Prefix), true
	case *s3.DeleteObjectInput:
		return Counts{Delete: 1}, s(in.Bucket), s(in.Key), true
	case *s3.AbortMultipartUploadInput:
		return Counts{Delete: 1}, s(in.Bucket), s(in.Key), true
	case *s3.DeleteObjectsInput:
		key := ""
		if in.Delete != nil && len(in.Delete.Objects) > 0 {
			key = s(in.Delete.Objects[0].Key)
		}
		return Counts{Delete: 1}, s(in.Bucket), key, true
	}
	return Counts{}, "", "", false
}

// tableRoot is the part of a key before its data/ or metadata/ segment (the
// table's location in the bucket), or the key's directory when it has
// neither (state backups, probes: the node's own share).
func tableRoot(key string) string {
	key = strings.Trim(key, "/")
	for _, seg := range []string{"/data/", "/metadata/"} {
		if i := strings.Index(key+"/", seg); i >= 0 {
			return key[:i]
		}
	}
	if i := strings.LastIndex(key, "/"); i >= 0 {
		return key[:i]
	}
	return ""
}

func record(bucket, key string, c Counts) {
	k := bucket + "/" + tableRoot(key)
	mu.Lock()
	defer mu.Unlock()
	if counts[k] == nil {
		counts[k] = &Counts{}
	}
	counts[k].Add(c)
}

// For returns the requests made for objects of the table at location
// (s3://bucket/path) since the process started; zero for other schemes.
func For(location string) Counts {
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "s3" {
		return Counts{}
	}
	k := u.Host + "/" + strings.Trim(u.Path, "/")
	mu.Lock()
	defer mu.Unlock()
	if c := counts[k]; c != nil {
		return *c
	}
	return Counts{}
}

// Total returns every request counted, tables and the node's own.
func Total() Counts {
	mu.Lock()
	defer mu.Unlock()
	var t Counts
	for _, c := range counts {
		t.Add(*c)
	}
	return t
}
