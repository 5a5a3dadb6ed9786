package ingest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// TestUpsertFlush: what a flush of an upsert table writes and lists as
// tombstones, per mode and key.
func TestUpsertFlush(t *testing.T) {
	rec := func(part int32, off int64, key string, tomb bool) *records.Record {
		r := &records.Record{Topic: "t", Partition: part, Offset: off, Tombstone: tomb}
		if key != "-" {
			r.Key = []byte(key)
		}
		return r
	}
	buf := []*records.Record{
		rec(0, 0, "a", false), rec(0, 1, "b", false), rec(1, 0, "a", false), rec(0, 2, "a", true),
		rec(0, 3, "-", false), rec(0, 4, "-", false), rec(1, 1, "a", false), rec(0, 5, "b", false),
	}
	for _, tc := range []struct {
		name  string
		spec  sink.TableSpec
		keep  []string // partition/offset of the records written
		tombs map[string][]int64
	}{
		{"append keeps everything", sink.TableSpec{}, []string{"0/0", "0/1", "1/0", "0/2", "0/3", "0/4", "1/1", "0/5"}, nil},
		{"by the Kafka key: the last per partition and key, keyless all", sink.TableSpec{Mode: "upsert"},
			[]string{"0/2", "0/3", "0/4", "1/1", "0/5"}, map[string][]int64{"t/0": {2}}},
		{"by fields: everything, ordered by the committer", sink.TableSpec{Mode: "upsert", UpsertKey: []string{"id"}},
			[]string{"0/0", "0/1", "1/0", "0/2", "0/3", "0/4", "1/1", "0/5"}, map[string][]int64{"t/0": {2}}},
	} {
		p := &Pipeline{spec: tc.spec}
		out, tombs := p.upsertFlush(append([]*records.Record(nil), buf...))
		var keep []string
		for _, r := range out {
			keep = append(keep, fmt.Sprintf("%d/%d", r.Partition, r.Offset))
		}
		if !reflect.DeepEqual(keep, tc.keep) || !reflect.DeepEqual(tombs, tc.tombs) {
			t.Errorf("%s: wrote %v tombstones %v; want %v %v", tc.name, keep, tombs, tc.keep, tc.tombs)
		}
	}
}
