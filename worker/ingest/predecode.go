package ingest

import (
	"github.com/floe-io/floe/internal/records"
)

// JSON records are checked on the partitions' fetcher goroutines, in
// parallel, against the table's columns as they are (jsoncheck.go); one
// that fits is kept as fetched and appended to the file's columns by the
// sink. The pipeline goroutine decodes only the records that change the
// columns (a new field, a widened number) or fail, and those that were
// checked against columns that have changed since. A table's decoding was
// all on its pipeline's one goroutine, so a second core added nothing
// (docs/benchmarks.md, make bench-kafka).
//
// The fetchers read a published copy of the columns (shapeSnap), never
// the pipeline's own shape, which only the pipeline goroutine touches. Its
// version is bumped at every change of the shape (a decode that added or
// widened a column, a flush that marked columns committed, a reload), and
// a check is used only when its version is still current, so the record
// fits the columns it is written with, as decoding it on the pipeline
// goroutine would have found.

// shapeSnap is an immutable copy of a JSON table's columns for the
// fetchers, with the limits the pipeline decodes within.
type shapeSnap struct {
	shape *records.Shape
	ver   uint64
	lim   records.Limits
}

// publishShape bumps the shape's version and, for a JSON table, publishes
// a copy for the fetchers. Pipeline goroutine only.
func (p *Pipeline) publishShape() {
	p.shapeVer++
	if p.spec.Format != "json" || p.shape == nil {
		p.snap.Store(nil)
		return
	}
	p.snap.Store(&shapeSnap{shape: p.shape.Clone(), ver: p.shapeVer, lim: p.limits()})
}

// predecode checks a JSON value on a fetcher goroutine against the
// published columns, with the fetcher's scratch c. fits is false (and the
// pipeline decodes it) when there is no copy yet, the value is empty, bad,
// would change the columns, or is one the check leaves to the decoder.
func (p *Pipeline) predecode(c *checker, value []byte) (fits bool, ver uint64) {
	s := p.snap.Load()
	if s == nil || len(value) == 0 {
		return false, 0
	}
	return c.fits(s.shape, value, s.lim), s.ver
}

// decodeJSONFits is decodeJSONWith for a value that must fit shape as it
// is: it never changes shape, and ok is false when the value is bad or
// would add or widen a column. fitsJSON is held to it (FuzzFitsJSON).
func decodeJSONFits(shape *records.Shape, data []byte, lim records.Limits) (map[string]any, bool) {
	p := parser{data: data, lim: lim}
	p.ws()
	if p.pos >= len(data) || data[p.pos] != '{' {
		return nil, false
	}
	out, err := p.object(shape, false)
	if err != nil {
		return nil, false
	}
	p.ws()
	if p.pos != len(data) || len(p.adds) > 0 || len(p.widen) > 0 {
		return nil, false
	}
	return out, true
}

// Records of a registry format (avro, protobuf, json_schema) are decoded on
// the fetchers too, once their schema is compiled: the decoder then needs
// no registry call, and the decoded value does not depend on the table's
// columns. The pipeline goroutine still follows each schema id the first
// time it sees it, in record order, and decodes itself whatever the
// fetcher left (a schema not compiled yet, a bad record, the latest
// format, a key whose schema is new), so holds, pauses and dead letters
// happen there as before. Decoding was that goroutine's largest cost in
// an Avro or Protobuf drain (29% of a Protobuf drain's CPU samples, in
// series with everything else the goroutine does).

// cachedDecoder is a SchemaDecoder that can decode without the registry
// (schemas.Decoder): ok is false when it would need it, or the record is
// bad, and nothing is decoded then.
type cachedDecoder interface {
	ValueCached(format string, data []byte) (d records.Decoded, ok bool)
	KeyCached(data []byte) (d records.Decoded, keyOK, ok bool)
}

// preDecoded is a registry-format record decoded by its fetcher.
type preDecoded struct {
	value, key records.Decoded
	keyOK      bool
}

// predecodeSchema decodes a registry-format value (and its key) on a
// fetcher goroutine when the decoder can without the registry; nil leaves
// the record to the pipeline.
func (p *Pipeline) predecodeSchema(value, key []byte) *preDecoded {
	switch p.spec.Format {
	case "json", "raw", "latest":
		return nil
	}
	cd, ok := p.n.Schemas.(cachedDecoder)
	if !ok || len(value) == 0 {
		return nil
	}
	v, ok := cd.ValueCached(p.spec.Format, value)
	if !ok {
		return nil
	}
	pre := &preDecoded{value: v}
	if len(key) > 0 {
		if pre.key, pre.keyOK, ok = cd.KeyCached(key); !ok {
			return nil
		}
	}
	return pre
}
