package objstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/apache/iceberg-go/utils"
	"github.com/aws/smithy-go/middleware"
)

// Counts are requests by S3 billing class, and the metadata bytes written.
type Counts struct {
	Put    int64 `json:"put"`    // PUT, COPY, POST (multipart steps)
	Get    int64 `json:"get"`    // GET, HEAD
	List   int64 `json:"list"`   // LIST
	Delete int64 `json:"delete"` // DELETE, batch deletes and aborted uploads
	// MetadataBytes is the size of the bodies uploaded under the table's
	// metadata/ (metadata.json, manifest lists, manifests) by requests
	// that succeeded.
	MetadataBytes int64 `json:"metadata_bytes"`
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Put, c.Get, c.List, c.Delete = c.Put+o.Put, c.Get+o.Get, c.List+o.List, c.Delete+o.Delete
	c.MetadataBytes += o.MetadataBytes
}

var (
	mu     sync.Mutex
	counts = map[string]*Counts{} // "bucket/table root" -> counts
	once   sync.Once
)

// Install makes every s3:// FileIO opened from now on count its requests
// and give data files their table's storage class (AddStorageClasses). It
// is idempotent; the node calls it before it opens the warehouse.
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
	cfg, err := awsConfigFor(ctx, props) // resolved once per property set (awsconfig.go)
	if err != nil {
		return nil, fmt.Errorf("s3 configuration for %s: %w", parsed.Redacted(), err)
	}
	alias := *parsed
	alias.Scheme = "s3a" // the same factory, still registered; paths keep s3://
	fsys, err := icebergio.LoadFS(utils.WithAwsConfig(ctx, &cfg), props, alias.String())
	if b, ok := fsys.(*blobfs.FileIO); ok && err == nil {
		return wholeSmallReads{FileIO: b}, nil // smallread.go
	}
	return fsys, err
}

func addCounter(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("FloeCountRequests", handle), middleware.After)
}

// handle runs once per operation, before the SDK's retries: it counts the
// request for its table, gives an upload under data/ its table's storage
// class, and counts the body of a successful upload under metadata/.
func handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	op, ok := classify(in.Parameters)
	if !ok {
		return next.HandleInitialize(ctx, in)
	}
	root, seg := splitKey(op.key)
	var body *bodySize
	switch seg {
	case segData:
		setClass(in.Parameters, op.bucket, root)
	case segMetadata:
		body = measure(in.Parameters) // before the SDK reads it
	}
	out, md, err := next.HandleInitialize(ctx, in)
	c := op.counts
	if err == nil && body != nil {
		c.MetadataBytes = body.n()
	}
	record(op.bucket, root, c)
	return out, md, err
}

// Key segments: where an object sits in its table's location.
const (
	segNone     = ""
	segData     = "data"
	segMetadata = "metadata"
)

// splitKey returns the table root of a key (the part before its data/ or
// metadata/ segment, the table's location in the bucket) and that segment;
// a key with neither (state backups, probes: the node's own share) has its
// directory as root. The last such segment counts, so a warehouse or
// table named data or metadata still resolves to the table: Iceberg keeps
// metadata files flat under metadata/, and partition directories under
// data/ are column=value, never a bare data or metadata.
func splitKey(key string) (root, seg string) {
	key = strings.Trim(key, "/")
	padded := "/" + key + "/"
	at, seg := -1, segNone
	for _, s := range []string{segData, segMetadata} {
		if i := strings.LastIndex(padded, "/"+s+"/"); i > at {
			at, seg = i, s
		}
	}
	if at >= 0 {
		return strings.Trim(padded[:at], "/"), seg
	}
	if i := strings.LastIndex(key, "/"); i >= 0 {
		return key[:i], segNone
	}
	return "", segNone
}

// tableRoot is splitKey's root.
func tableRoot(key string) string {
	root, _ := splitKey(key)
	return root
}

func record(bucket, root string, c Counts) {
	k := bucket + "/" + root
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
