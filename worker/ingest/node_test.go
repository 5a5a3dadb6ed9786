package ingest

import (
	"testing"

	"github.com/floe-io/floe/internal/membudget"
)

// A node's records are held to the records' share of the split it is
// given, and each partition reader fetches its part of the fetch share,
// within the fetch bounds.
func TestNodeSpendsTheSplitItIsGiven(t *testing.T) {
	for _, tc := range []struct {
		name      string
		budget    int64
		parts     int64
		records   int64
		fetchSize int32
	}{
		{name: "a quarter and an eighth of 64 MiB, 8 partitions", budget: 64 << 20, parts: 8, records: 16 << 20, fetchSize: 1 << 20},
		{name: "many partitions: the floor", budget: 64 << 20, parts: 5000, records: 16 << 20, fetchSize: minFetchBytes},
		{name: "one partition of a large budget: the ceiling", budget: 1 << 40, parts: 1, records: 1 << 38, fetchSize: maxFetchBytes},
		{name: "a zero budget: zero shares, the smallest fetch", budget: 0, parts: 4, records: 0, fetchSize: minFetchBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNode(Deps{Config: Config{Memory: membudget.Of(tc.budget)}})
			if n.mem.limit != tc.records {
				t.Errorf("records held to %d, want %d", n.mem.limit, tc.records)
			}
			if got := n.fetchBytes(tc.parts); got != tc.fetchSize {
				t.Errorf("fetch size %d for %d partitions, want %d", got, tc.parts, tc.fetchSize)
			}
		})
	}
}
