package objstore

import (
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ClassFunc returns the S3 storage class that new data files of the table
// at location (s3://bucket/path, the table's root) take, or "" for the
// bucket's default (no header sent).
type ClassFunc func(location string) string

var classes struct {
	sync.RWMutex
	next  int
	funcs map[int]ClassFunc
}

// AddStorageClasses makes every upload under a table's data/ from now on
// take the class f gives that table, until remove is called (a stopped
// node). Several nodes of one process (tests) each add theirs: the first
// non-empty answer wins, so f answers "" for a location it does not know.
// f is asked at each upload, so a mapping that changes its storage_class
// applies to the next data file without a restart; it must be quick and
// must make no request to the store.
//
// Only data files take it. Metadata files (metadata.json, manifest lists,
// manifests) stay in the bucket's default class: they are small and read
// by every scan, commit and compaction, while the infrequent-access
// classes (STANDARD_IA, ONEZONE_IA, GLACIER_IR) bill each object as at
// least 128 KiB and charge per GB read, and INTELLIGENT_TIERING bills a
// monitoring fee per object while never tiering objects under 128 KiB.
func AddStorageClasses(f ClassFunc) (remove func()) {
	classes.Lock()
	defer classes.Unlock()
	if classes.funcs == nil {
		classes.funcs = map[int]ClassFunc{}
	}
	id := classes.next
	classes.next++
	classes.funcs[id] = f
	return func() {
		classes.Lock()
		defer classes.Unlock()
		delete(classes.funcs, id)
	}
}

// classOf asks the resolvers, in the order they were added.
func classOf(location string) types.StorageClass {
	classes.RLock()
	defer classes.RUnlock()
	for _, id := range slices.Sorted(maps.Keys(classes.funcs)) {
		if c := classes.funcs[id](location); c != "" {
			return types.StorageClass(c)
		}
	}
	return ""
}

// setClass sets the storage class of an upload under the data/ of the
// table at bucket/root, unless the caller set one.
func setClass(p any, bucket, root string) {
	loc := "s3://" + bucket + "/" + root
	switch in := p.(type) {
	case *s3.PutObjectInput:
		if in.StorageClass == "" {
			in.StorageClass = classOf(loc)
		}
	case *s3.CreateMultipartUploadInput:
		if in.StorageClass == "" {
			in.StorageClass = classOf(loc)
		}
	}
}
