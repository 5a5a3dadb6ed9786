package floebench

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

// TestParseRaftMetrics: the tables bench reads the leader changes and the
// apply histogram's sum and count from a node's exposition, and the
// window's figures from two readings.
func TestParseRaftMetrics(t *testing.T) {
	body := []byte(`# HELP floe_raft_leader_changes_total Raft leader changes.
# TYPE floe_raft_leader_changes_total counter
floe_raft_leader_changes_total 3
floe_raft_apply_duration_seconds_bucket{le="0.01"} 7
floe_raft_apply_duration_seconds_sum 0.5
floe_raft_apply_duration_seconds_count 10
floe_raft_leader_changes_totalx 99
`)
	r := parseRaftMetrics(body)
	if !r.ok || r.leaderChanges != 3 || r.applySum != 0.5 || r.applyCount != 10 {
		t.Fatalf("parsed %+v", r)
	}
	if r := parseRaftMetrics([]byte("go_goroutines 5\n")); r.ok {
		t.Fatalf("a node without the counter read as ok: %+v", r)
	}
	first := []raftReading{r, {ok: true, leaderChanges: 1, applySum: 1, applyCount: 100}}
	last := []raftReading{{ok: true, leaderChanges: 5, applySum: 1.5, applyCount: 20}, {ok: true, leaderChanges: 2, applySum: 2, applyCount: 200}}
	changes, ms, ok := raftDelta(first, last)
	// node 1 saw 2 changes, node 2 one; 2 s over 110 proposals.
	if !ok || changes != 2 || ms < 18.1 || ms > 18.2 {
		t.Fatalf("delta: %v changes, %v ms, ok %v", changes, ms, ok)
	}
}
