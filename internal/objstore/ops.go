package objstore

import (
	"io"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// op is one S3 operation as counted: its billing class, bucket and key.
type op struct {
	counts      Counts
	bucket, key string
}

// classify is an operation's billing class, bucket and key.
func classify(p any) (op, bool) {
	s := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	put, get, list, del := Counts{Put: 1}, Counts{Get: 1}, Counts{List: 1}, Counts{Delete: 1}
	switch in := p.(type) {
	case *s3.PutObjectInput:
		return op{put, s(in.Bucket), s(in.Key)}, true
	case *s3.CreateMultipartUploadInput:
		return op{put, s(in.Bucket), s(in.Key)}, true
	case *s3.UploadPartInput:
		return op{put, s(in.Bucket), s(in.Key)}, true
	case *s3.CompleteMultipartUploadInput:
		return op{put, s(in.Bucket), s(in.Key)}, true
	case *s3.CopyObjectInput:
		return op{put, s(in.Bucket), s(in.Key)}, true
	case *s3.GetObjectInput:
		return op{get, s(in.Bucket), s(in.Key)}, true
	case *s3.HeadObjectInput:
		return op{get, s(in.Bucket), s(in.Key)}, true
	case *s3.ListObjectsV2Input:
		return op{list, s(in.Bucket), s(in.Prefix)}, true
	case *s3.DeleteObjectInput:
		return op{del, s(in.Bucket), s(in.Key)}, true
	case *s3.AbortMultipartUploadInput:
		return op{del, s(in.Bucket), s(in.Key)}, true
	case *s3.DeleteObjectsInput:
		key := ""
		if in.Delete != nil && len(in.Delete.Objects) > 0 {
			key = s(in.Delete.Objects[0].Key)
		}
		return op{del, s(in.Bucket), key}, true
	}
	return op{}, false
}

// bodySize is the size of an upload's body, known before the SDK sends it
// (n) or counted as it is read (a body that is neither sized nor
// seekable; the SDK cannot retry those, so it is read once).
type bodySize struct {
	known   int64
	counter *countingReader
}

func (b *bodySize) n() int64 {
	if b.counter != nil {
		return b.counter.read
	}
	return b.known
}

// measure returns the body size of a PutObject or UploadPart, nil for other
// operations. iceberg-go writes through gocloud's transfer manager, which
// hands the SDK a bytes.Reader per object (small files, one PutObject) or
// per part (multipart), so the size is the reader's length: the bytes the
// object holds, without the SDK's chunk and checksum framing.
func measure(p any) *bodySize {
	var (
		body   *io.Reader
		length *int64
	)
	switch in := p.(type) {
	case *s3.PutObjectInput:
		body, length = &in.Body, in.ContentLength
	case *s3.UploadPartInput:
		body, length = &in.Body, in.ContentLength
	default:
		return nil
	}
	if length != nil && *length >= 0 {
		return &bodySize{known: *length}
	}
	switch r := (*body).(type) {
	case nil:
		return &bodySize{}
	case interface{ Len() int }: // bytes.Reader, strings.Reader, bytes.Buffer
		return &bodySize{known: int64(r.Len())}
	case io.Seeker:
		cur, err1 := r.Seek(0, io.SeekCurrent)
		end, err2 := r.Seek(0, io.SeekEnd)
		if _, err3 := r.Seek(cur, io.SeekStart); err1 == nil && err2 == nil && err3 == nil {
			return &bodySize{known: end - cur}
		}
		return &bodySize{}
	}
	c := &countingReader{r: *body}
	*body = c
	return &bodySize{counter: c}
}

type countingReader struct {
	r    io.Reader
	read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}
