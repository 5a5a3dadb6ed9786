package main

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCountingS3Kinds: the tables bench's store counts each request in
// its billing class and its object's kind, and the bytes put.
func TestCountingS3Kinds(t *testing.T) {
	c := &countingS3{counts: map[string]*objectCounts{}}
	for _, k := range objectKinds {
		c.counts[k] = &objectCounts{}
	}
	for _, tc := range []struct {
		method, target, body string
		kind                 string
		want                 objectCounts
	}{
		{"PUT", "/lake/wh/bench/t1/metadata/00003-uuid.metadata.json", "{}", kindMetadataJSON, objectCounts{Put: 1, PutBytes: 2}},
		{"PUT", "/lake/wh/bench/t1/metadata/snap-1-0-uuid.avro", "abc", kindManifestList, objectCounts{Put: 1, PutBytes: 3}},
		{"GET", "/lake/wh/bench/t1/metadata/uuid-m0.avro", "", kindManifest, objectCounts{Get: 1}},
		{"HEAD", "/lake/wh/bench/t1/data/region=a/x.parquet", "", kindData, objectCounts{Get: 1}},
		{"DELETE", "/lake/wh/bench/t1/_delta_log/00000000000000000001.json", "", kindDelta, objectCounts{Delete: 1}},
		{"GET", "/lake?list-type=2&prefix=wh/", "", kindOther, objectCounts{List: 1}},
		{"POST", "/lake?delete", "<Delete/>", kindOther, objectCounts{Delete: 1}},
	} {
		before := c.snapshot()[tc.kind]
		c.count(httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body)))
		after := c.snapshot()[tc.kind]
		got := objectCounts{Put: after.Put - before.Put, Get: after.Get - before.Get, List: after.List - before.List,
			Delete: after.Delete - before.Delete, PutBytes: after.PutBytes - before.PutBytes}
		if got != tc.want {
			t.Errorf("%s %s: %s counts %+v, want %+v", tc.method, tc.target, tc.kind, got, tc.want)
		}
	}
}
