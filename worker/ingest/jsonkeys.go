package ingest

import (
	"github.com/floe-io/floe/internal/records"
)

// Field names are looked up without allocating: a record's keys are
// mostly names the table already has, and allocating each as a string
// (then hashing it into the row map) was a tenth of the decode. A key
// without escapes is compared as bytes against the shape's names, trying
// first the field after the one matched last (producers write a fixed
// field order), and the row map is keyed by the field's own name string.

// plainKey reads the key at p.pos (on its opening quote) when it holds no
// escape and no control character, returning its bytes and moving past
// the closing quote. Otherwise it returns false and leaves p.pos.
func (p *parser) plainKey() ([]byte, bool) {
	for i := p.pos + 1; i < len(p.data); i++ {
		switch c := p.data[i]; {
		case c == '"':
			raw := p.data[p.pos+1 : i]
			p.pos = i + 1
			return raw, true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// lookupBytes is lookup for a plain key's bytes; next is the index in
// s.Fields to try first, advanced past a match.
func (p *parser) lookupBytes(s *records.Shape, raw []byte, next *int) *records.Field {
	if i := *next; i < len(s.Fields) && s.Fields[i].Name == string(raw) {
		*next = i + 1
		return s.Fields[i]
	}
	for i, f := range s.Fields {
		if f.Name == string(raw) {
			*next = i + 1
			return f
		}
	}
	for _, a := range p.adds {
		if a.parent == s && a.field.Name == string(raw) {
			return a.field
		}
	}
	return nil
}
