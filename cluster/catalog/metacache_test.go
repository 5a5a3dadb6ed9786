package catalog

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// testMetadata is a table's metadata at root with snaps snapshots, each
// carrying a summary property of offsetsBytes bytes (floe.offsets).
func testMetadata(t *testing.T, root string, snaps, offsetsBytes int) table.Metadata {
	t.Helper()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "v", Type: iceberg.PrimitiveTypes.String})
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := table.MetadataBuilderFromBase(meta, "")
	if err != nil {
		t.Fatal(err)
	}
	offsets := strings.Repeat("x", offsetsBytes)
	for i := range snaps {
		s := &table.Snapshot{SnapshotID: int64(i + 1), SequenceNumber: int64(i + 1), TimestampMs: time.Now().UnixMilli() + int64(i),
			ManifestList: fmt.Sprintf("%s/metadata/snap-%d.avro", root, i+1),
			Summary:      &table.Summary{Operation: table.OpAppend, Properties: iceberg.Properties{"floe.offsets": offsets}}}
		if i > 0 {
			parent := int64(i)
			s.ParentSnapshotID = &parent
		}
		if err := b.AddSnapshot(s); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMetaCacheOneEntryPerTable: a table's newer version replaces its
// older one (the older location misses), tables stay cached up to the
// byte bound whatever their number, and the least recently used goes first
// beyond it.
func TestMetaCacheOneEntryPerTable(t *testing.T) {
	small := estimateMetadataSize(testMetadata(t, "s3://b/t0", 2, 10))
	c := newMetaCache(10 * small)
	metas := map[string]table.Metadata{}
	for i := range 9 {
		root := fmt.Sprintf("s3://b/t%d", i)
		metas[root] = testMetadata(t, root, 2, 10)
		c.put(root+"/metadata/00001.metadata.json", metas[root])
	}
	if got := c.len(); got != 9 {
		t.Fatalf("9 tables under the bound: cache holds %d", got)
	}
	c.put("s3://b/t0/metadata/00002.metadata.json", metas["s3://b/t0"])
	if _, ok := c.get("s3://b/t0/metadata/00001.metadata.json"); ok {
		t.Fatal("the replaced version of t0 is still cached")
	}
	if _, ok := c.get("s3://b/t0/metadata/00002.metadata.json"); !ok {
		t.Fatal("t0's new version is not cached")
	}
	if got := c.len(); got != 9 {
		t.Fatalf("a new version added an entry: %d tables", got)
	}
	// t1 was used last of the old ones; t2 is then the least recently used.
	c.get("s3://b/t1/metadata/00001.metadata.json")
	for i := 9; i < 12; i++ {
		root := fmt.Sprintf("s3://b/t%d", i)
		c.put(root+"/metadata/00001.metadata.json", testMetadata(t, root, 2, 10))
	}
	if c.size > c.limit {
		t.Fatalf("cache holds %d bytes, over its bound %d", c.size, c.limit)
	}
	if _, ok := c.get("s3://b/t2/metadata/00001.metadata.json"); ok {
		t.Fatal("the least recently used table t2 was not evicted")
	}
	if _, ok := c.get("s3://b/t1/metadata/00001.metadata.json"); !ok {
		t.Fatal("t1, used recently, was evicted")
	}
}

// TestEstimateMetadataSize: the estimate follows the encoded file within
// a factor of two, as snapshots and their summaries grow.
func TestEstimateMetadataSize(t *testing.T) {
	for _, tc := range []struct{ snaps, offsets int }{{1, 40}, {32, 40}, {500, 40}, {100, 20000}} {
		meta := testMetadata(t, "s3://b/t", tc.snaps, tc.offsets)
		data, err := json.Marshal(meta)
		if err != nil {
			t.Fatal(err)
		}
		est := estimateMetadataSize(meta)
		if ratio := float64(est) / float64(len(data)); ratio < 0.5 || ratio > 2 {
			t.Errorf("%d snapshots, %d-byte summaries: estimate %d for a %d-byte file (%.2f)", tc.snaps, tc.offsets, est, len(data), ratio)
		}
	}
}
