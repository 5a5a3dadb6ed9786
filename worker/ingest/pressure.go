package ingest

import (
	"slices"

	"github.com/floe-io/floe/worker/source"
)

// How the budget is split between records, fetches and the rest is
// internal/membudget's; the figures here are what one record costs.
const (
	// Fetch sizes per partition: at least minFetchBytes (Kafka returns a
	// whole batch even past the size, so a small size slows a partition
	// down but never stops it), at most maxFetchBytes (kafka-go's and
	// franz-go's old default).
	minFetchBytes = 16 << 10
	maxFetchBytes = 16 << 20
	// DefaultMaxPending caps a table's pending ledger entries (recorded,
	// uncommitted, from every node) when Config.MaxPending is 0. Each
	// node records about one entry per commit interval per table, so 256
	// is minutes of a stalled committer on a large fleet; past it flushes
	// wait and the budget holds the fetchers back.
	DefaultMaxPending = 256
	// What a buffered record costs beyond its key and header bytes,
	// measured with BenchmarkRecordHeap (live heap per buffered record;
	// figures in docs/internals.md "Memory budget"): recordOverhead for the
	// records.Record, its key's allocation and the buffer's pointer; a raw
	// value is kept as fetched; a decoded value (json and the registry
	// formats) is a tree of maps and interfaces, about decodedOverhead
	// plus decodedFactor times its encoded size for JSON text (json and
	// json_schema), and registryFactor times it for Avro and Protobuf,
	// whose binary encodings carry no field names and varint numbers: the
	// benchmark's order decodes to about the same maps from 209 B of Avro
	// or 235 B of Protobuf as from 429 B of JSON (schemas'
	// BenchmarkDecodedHeap: 2,165 and 2,176 B, 10.4 and 9.3 per byte).
	recordOverhead  = 176
	decodedOverhead = 352
	decodedFactor   = 5
	registryFactor  = 10
	// queueLen is the capacity of a pipeline's queue from its fetchers.
	// Its slots are allocated with the pipeline (about 160 bytes each,
	// whether used or not); the records in it are charged to the budget,
	// which is what holds fetchers back, so it need not be deep.
	queueLen = 512
	// headerOverhead is one header's slice entry and strings.
	headerOverhead = 48
)

// RecordCost is the budget a fetched message is charged when the table's
// format is format.
func RecordCost(format string, m source.Message) int64 {
	n := int64(recordOverhead + len(m.Key))
	switch format {
	case "raw":
		n += int64(len(m.Value))
	case "json", "json_schema":
		n += int64(decodedOverhead + decodedFactor*len(m.Value))
	default: // avro, protobuf, and latest, which may be either
		n += int64(decodedOverhead + registryFactor*len(m.Value))
	}
	for _, h := range m.Headers {
		n += int64(headerOverhead + len(h.Key) + len(h.Value))
	}
	return n
}

// fetchBytes is the fetch size of each partition reader when the node
// fetches parts partitions: their share of the budget, within bounds.
func (n *Node) fetchBytes(parts int64) int32 {
	share := n.Config.Memory.Fetch / max(parts, 1)
	return int32(min(max(share, minFetchBytes), maxFetchBytes))
}

// register and unregister add and remove a running pipeline.
func (n *Node) register(p *Pipeline) {
	n.pipesMu.Lock()
	n.pipes[p] = struct{}{}
	n.pipesMu.Unlock()
}

func (n *Node) unregister(p *Pipeline) {
	n.pipesMu.Lock()
	delete(n.pipes, p)
	n.pipesMu.Unlock()
}

// press asks the pipelines with the largest buffers to flush, largest
// first, until their buffers add up to what a waiting fetcher lacks. The
// bytes stay held until each flush is recorded; the waiter re-checks at
// every release and presses again if that was not enough.
func (n *Node) press(need int64) {
	type cand struct {
		p     *Pipeline
		bytes int64
	}
	n.pipesMu.Lock()
	cands := make([]cand, 0, len(n.pipes))
	for p := range n.pipes {
		if b := p.buffered.Load(); b > 0 {
			cands = append(cands, cand{p, b})
		}
	}
	n.pipesMu.Unlock()
	slices.SortFunc(cands, func(a, b cand) int { return int(b.bytes - a.bytes) })
	for _, c := range cands {
		if need <= 0 {
			return
		}
		c.p.requestFlush()
		need -= c.bytes
	}
}

// MemoryHeld returns the bytes the budget holds now and its limit (the
// records' share of memory_budget).
func (n *Node) MemoryHeld() (held, limit int64) { return n.mem.Held(), n.mem.limit }
