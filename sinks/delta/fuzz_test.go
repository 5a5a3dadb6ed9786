package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/floe-io/floe/internal/ledger"
)

// FuzzParseActions fuzzes the commit file reader (the log's decoder of
// bytes any writer of the table may have put there): it never panics,
// refuses with ErrCorruptLog, and what it accepts encodes and reads back
// to the same actions.
func FuzzParseActions(f *testing.F) {
	for _, s := range []string{
		`{"commitInfo":{"timestamp":1,"operation":"WRITE","floe.offsets":{"t/0":5},"floe.commit-id":"c"}}`,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["timestampNtz"]}}`,
		`{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}}`,
		"{\"add\":{\"path\":\"a\",\"partitionValues\":{\"r\":null},\"size\":1,\"modificationTime\":1,\"dataChange\":true,\"stats\":\"{}\"}}\n{\"remove\":{\"path\":\"b\",\"dataChange\":false}}",
		`{"add":{"path":"p","partitionValues":[{"key":"r","value":"eu"}]}}`,
		`{"txn":{"appId":"a","version":9}}`,
		`{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","sizeInBytes":40,"cardinality":6}}}`,
		`{"remove":{"path":"a","dataChange":true,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,"sizeInBytes":40,"cardinality":6}}}`,
		`{"cdc":{"path":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := parseActions(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("error without ErrCorruptLog: %v", err)
			}
			return
		}
		enc, err := encodeActions(acts)
		if err != nil {
			t.Fatalf("encoding accepted actions: %v", err)
		}
		again, err := parseActions(enc)
		if err != nil {
			t.Fatalf("reading back %q: %v", enc, err)
		}
		enc2, _ := encodeActions(again)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("not stable:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzLastCheckpoint fuzzes the _last_checkpoint reader.
func FuzzLastCheckpoint(f *testing.F) {
	f.Add([]byte(`{"version":10,"size":13,"sizeInBytes":4000,"numOfAddFiles":10}`))
	f.Add([]byte(`{"version":10,"size":13,"parts":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lc, err := parseLastCheckpoint(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("error without ErrCorruptLog: %v", err)
			}
			return
		}
		if lc.Version < 0 {
			t.Fatalf("accepted version %d", lc.Version)
		}
		if _, err := json.Marshal(lc); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodeCheckpoint fuzzes the checkpoint reader with mutations of a
// real checkpoint: an ErrCorruptLog, never a panic (arrow's Parquet reader
// panics in its own goroutines on chunks outside the file: checkChunks).
func FuzzDecodeCheckpoint(f *testing.F) {
	l := &Log{opts: Options{CheckpointInterval: 10, EngineInfo: "floe"}, snap: newSnapshot()}
	region, _ := iceberg.NewLiteral("eu").MarshalBinary()
	d := ledger.FileDescriptor{Path: "file:///wh/t/data/a.parquet", SpecID: 1, RecordCount: 3, SizeBytes: 100,
		PartValues: map[int][]byte{1000: region}}
	acts, err := l.actions(appendCommit(testTable("file:///wh/t", 1), 1, File{FileDescriptor: d}), 0)
	if err != nil {
		f.Fatal(err)
	}
	l.snap.apply(0, acts)
	data, _, _, err := encodeCheckpoint(l.snap, fixedClock()())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeCheckpoint(context.Background(), data); err != nil && !errors.Is(err, ErrCorruptLog) {
			t.Fatalf("error without ErrCorruptLog: %v", err)
		}
	})
}
