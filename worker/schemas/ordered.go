package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// jnode is a JSON value that keeps the order of object keys: a JSON
// Schema's properties become columns in the order they are written.
type jnode struct {
	keys []string
	obj  map[string]*jnode
	arr  []*jnode
	val  any  // string, json.Number, bool, nil for scalars
	kind byte // 'o' object, 'a' array, 's' scalar
}

func parseOrdered(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, fmt.Errorf("parsing JSON Schema: %w", err)
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{kind: 'o', obj: map[string]*jnode{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := n.obj[k]; !dup {
					n.keys = append(n.keys, k)
				}
				n.obj[k] = v
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &jnode{kind: 'a'}
			for dec.More() {
				v, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			_, err := dec.Token()
			return n, err
		}
	}
	return &jnode{kind: 's', val: tok}, nil
}

func (n *jnode) get(k string) *jnode {
	if n == nil || n.kind != 'o' {
		return nil
	}
	return n.obj[k]
}

func (n *jnode) str() string {
	if n == nil {
		return ""
	}
	s, _ := n.val.(string)
	return s
}
