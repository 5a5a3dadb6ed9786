package objstore

import (
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ClassFunc returns the S3 storage class that new data files of the table
// at location (s3://bucket/path, the table's root) take, or "" for the
// bucket's default (no header sent).
type ClassFunc func(location string) string

var classes atomic.Pointer[ClassFunc]

// SetStorageClasses makes every upload under a table's data/ from now on
// take the class f gives that table; nil sends none. f is asked at each
// upload, so a mapping that changes its storage_class applies to the next
// data file without a restart; it must be quick and must not make requests
// to the store.
//
// Only data files take it. Metadata files (metadata.json, manifest lists,
// manifests) stay in the bucket's default class: they are small and read
// by every scan, commit and compaction, while the infrequent-access
// classes (STANDARD_IA, ONEZONE_IA, GLACIER_IR) bill each object as at
// least 128 KiB and charge per GB read, and INTELLIGENT_TIERING bills a
// monitoring fee per object while never tiering objects under 128 KiB.
func SetStorageClasses(f ClassFunc) {
	if f == nil {
		classes.Store(nil)
		return
	}
	classes.Store(&f)
}

// setClass sets the storage class of an upload under the data/ of the
// table at bucket/root, unless the caller set one.
func setClass(p any, bucket, root string) {
	fp := classes.Load()
	if fp == nil {
		return
	}
	class := func() types.StorageClass { return types.StorageClass((*fp)("s3://" + bucket + "/" + root)) }
	switch in := p.(type) {
	case *s3.PutObjectInput:
		if in.StorageClass == "" {
			in.StorageClass = class()
		}
	case *s3.CreateMultipartUploadInput:
		if in.StorageClass == "" {
			in.StorageClass = class()
		}
	}
}
