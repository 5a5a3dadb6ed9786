package schemas

import "github.com/floe-io/floe/internal/records"

// Decoding without the registry. The pipeline decodes a registry format's
// records on its one goroutine, where a schema seen for the first time is
// fetched, compiled and followed; once a schema is compiled, its records
// can be decoded anywhere, so the partitions' fetchers decode them in
// parallel (worker/ingest/predecode.go). These methods never call the
// registry: when they would have to, or when the record is bad, ok is
// false and nothing is decoded, and the pipeline's Value or Key does the
// work and reports the error as before.

// cached is the compiled schema id, or nil when it is not compiled yet.
func (d *Decoder) cached(id int) *compiled {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.compiled[id]
}

// ValueCached decodes data as Value does when that needs no registry
// call: the format names its schema by id (not latest) and the id is
// compiled already.
func (d *Decoder) ValueCached(format string, data []byte) (records.Decoded, bool) {
	want := formatType(format)
	if want == "" {
		return records.Decoded{}, false // latest looks its subject up
	}
	id, body, err := header(data)
	if err != nil {
		return records.Decoded{}, false
	}
	c := d.cached(id)
	if c == nil || c.typ != want {
		return records.Decoded{}, false
	}
	out, err := d.decode(c, nil, body, true)
	if err != nil {
		return records.Decoded{}, false
	}
	return out, true
}

// KeyCached is Key without a registry call: keyOK and the key as Key
// returns them, and ok false when Key could need the registry (a framed
// key whose schema id is not compiled yet).
func (d *Decoder) KeyCached(data []byte) (dec records.Decoded, keyOK, ok bool) {
	if len(data) < 5 || data[0] != magic {
		return records.Decoded{}, false, true
	}
	id, body, err := header(data)
	if err != nil {
		return records.Decoded{}, false, true
	}
	c := d.cached(id)
	if c == nil {
		return records.Decoded{}, false, false
	}
	if dec, err = d.decode(c, nil, body, true); err != nil {
		return records.Decoded{}, false, true
	}
	return dec, true, true
}
