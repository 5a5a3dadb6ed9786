package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// resultText renders a command's result (a plain struct, or the JSON a
// peer answered) as one "label: value" line per field, in the result's own
// order, for people: underscores become spaces, byte counts are humanized
// and nested values are shown compactly. A result that is not a JSON
// object is shown as it is.
func resultText(res any) string {
	raw, ok := res.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(res); err != nil {
			return fmt.Sprint(res)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return string(raw)
	}
	var b strings.Builder
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return string(raw)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return string(raw)
		}
		fmt.Fprintf(&b, "%s: %s\n", strings.ReplaceAll(key, "_", " "), valueText(key, v))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// valueText is one field's value: a string unquoted, a byte count
// humanized, anything else as compact JSON.
func valueText(key string, v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var n json.Number
	if strings.HasPrefix(key, "bytes") || strings.HasSuffix(key, "bytes") {
		if json.Unmarshal(v, &n) == nil {
			if i, err := n.Int64(); err == nil {
				return fmt.Sprintf("%s (%d bytes)", humanBytes(i), i)
			}
		}
	}
	var c bytes.Buffer
	if json.Compact(&c, v) == nil {
		return c.String()
	}
	return string(v)
}
