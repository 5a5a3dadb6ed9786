package ingest

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/floe-io/floe/internal/records"
)

// A new field's value is decoded generically (encoding/json into a map),
// which keeps no key order, and infer walks the map's keys sorted. Columns
// are documented to be added in the order they first appear, nested ones
// too, so the inferred shape's struct fields are put back in the order the
// record wrote them (keyOrder, then reorder). The rare path only: a field
// the table does not have yet.

// keyOrder is the order in which the keys of one JSON object (or, for an
// array, of all its elements' objects merged) first appear, with the same
// for each key's value.
type keyOrder struct {
	keys []string
	kids map[string]*keyOrder
	elem *keyOrder // an array's elements, merged
}

// orderOf reads raw (valid JSON) into its key order; nil for a scalar.
func orderOf(raw []byte) *keyOrder {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	o, err := readOrder(dec)
	if err != nil {
		return nil // raw was validated: no order rather than a failure
	}
	return o
}

// readOrder reads one value from dec.
func readOrder(dec *json.Decoder) (*keyOrder, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &keyOrder{kids: map[string]*keyOrder{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := readOrder(dec)
			if err != nil {
				return nil, err
			}
			o.add(k, v)
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		var elem *keyOrder
		for dec.More() {
			v, err := readOrder(dec)
			if err != nil {
				return nil, err
			}
			elem = merge2(elem, v)
		}
		_, err := dec.Token() // ]
		return &keyOrder{elem: elem}, err
	}
	return nil, nil
}

// add records key k (first appearance wins) with value order v.
func (o *keyOrder) add(k string, v *keyOrder) {
	if _, seen := o.kids[k]; !seen {
		o.keys = append(o.keys, k)
	}
	o.kids[k] = merge2(o.kids[k], v)
}

// merge2 merges b's order after a's.
func merge2(a, b *keyOrder) *keyOrder {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if a.kids == nil && b.kids != nil {
		a.kids = map[string]*keyOrder{}
	}
	for _, k := range b.keys {
		a.add(k, b.kids[k])
	}
	a.elem = merge2(a.elem, b.elem)
	return a
}

// reorder puts the struct fields of s (inferred from the value o was read
// from) in o's order, at every depth.
func reorder(s *records.Shape, o *keyOrder) {
	if s == nil || o == nil {
		return
	}
	switch s.Kind {
	case records.Struct:
		pos := func(name string) int {
			if i := slices.Index(o.keys, name); i >= 0 {
				return i
			}
			return len(o.keys)
		}
		slices.SortStableFunc(s.Fields, func(a, b *records.Field) int { return pos(a.Name) - pos(b.Name) })
		for _, f := range s.Fields {
			reorder(f.Shape, o.kids[f.Name])
		}
	case records.List:
		reorder(s.Elem, o.elem)
	}
}
