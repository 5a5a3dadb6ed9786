package catalog

import (
	"container/list"
	"sync"

	"github.com/apache/iceberg-go/table"
)

// metadataCacheBytes bounds the parsed metadata the catalog keeps, by the
// estimated size of its files. Every flush, commit, compaction plan and
// status report reads a table's current metadata, and parsing it costs
// about 1 ms at 32 snapshots and 14 ms at 500 (iceberg-go v0.7.0), so
// the cache is meant to hold every table this node works on: one entry
// per table (its newest metadata read or written), least recently used out
// first when the bound is passed. 32 MiB holds 1,000 tables of 30 KB of
// metadata each, or 75 of 430 KB (500 snapshots of a 2-partition table).
const metadataCacheBytes = 32 << 20

// metaCache is that cache. A table is keyed by its location (the table's
// root, the same for every metadata version).
type metaCache struct {
	mu     sync.Mutex
	limit  int64
	size   int64
	lru    *list.List               // of *metaEntry, most recent in front
	byLoc  map[string]*list.Element // metadata location -> entry
	byRoot map[string]*list.Element // table location -> entry
}

type metaEntry struct {
	loc, root string
	meta      table.Metadata
	size      int64
}

func newMetaCache(limit int64) *metaCache {
	return &metaCache{limit: limit, lru: list.New(), byLoc: map[string]*list.Element{}, byRoot: map[string]*list.Element{}}
}

// get returns the metadata at loc when it is the cached version of its
// table.
func (c *metaCache) get(loc string) (table.Metadata, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byLoc[loc]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*metaEntry).meta, true
}

// put makes meta (at loc) its table's cached version, replacing the one
// before: a table's older versions are read rarely (time travel), its
// current one on every operation.
func (c *metaCache) put(loc string, meta table.Metadata) {
	ent := &metaEntry{loc: loc, root: meta.Location(), meta: meta, size: estimateMetadataSize(meta)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byLoc[loc]; ok {
		c.lru.MoveToFront(e)
		return
	}
	if e, ok := c.byRoot[ent.root]; ok {
		c.remove(e)
	}
	c.byLoc[loc] = c.lru.PushFront(ent)
	c.byRoot[ent.root] = c.byLoc[loc]
	c.size += ent.size
	for c.size > c.limit && c.lru.Len() > 1 {
		c.remove(c.lru.Back())
	}
}

func (c *metaCache) remove(e *list.Element) {
	ent := e.Value.(*metaEntry)
	c.lru.Remove(e)
	delete(c.byLoc, ent.loc)
	delete(c.byRoot, ent.root)
	c.size -= ent.size
}

// len is how many tables the cache holds.
func (c *metaCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// estimateMetadataSize approximates the bytes of meta's file without
// encoding it: a fixed part, the properties and schemas, then each
// snapshot's fields and summary (floe.offsets grows with the partitions)
// and each metadata-log entry.
func estimateMetadataSize(meta table.Metadata) int64 {
	n := int64(512)
	for k, v := range meta.Properties() {
		n += int64(len(k) + len(v) + 6)
	}
	for e := range meta.PreviousFiles() {
		n += 64 + int64(len(e.MetadataFile))
	}
	for range meta.SnapshotLogs() {
		n += 64
	}
	for _, s := range meta.Snapshots() {
		n += 300 + int64(len(s.ManifestList))
		if s.Summary != nil {
			for k, v := range s.Summary.Properties {
				n += int64(len(k) + len(v) + 6)
			}
		}
	}
	for _, sc := range meta.Schemas() {
		n += int64(64 * sc.NumFields())
	}
	return n
}
