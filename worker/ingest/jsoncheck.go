package ingest

import (
	"strconv"

	"github.com/floe-io/floe/internal/records"
)

// A JSON value that fits the table's columns as they are is not decoded
// on the record's way in: the fetcher only checks it (fitsJSON, which
// allocates nothing), the record keeps its bytes (records.Record.JSON),
// and the sink appends them straight to the Arrow builders when it
// writes the file. A record that does not pass the check takes the
// decoding path it always took (decodeJSONChanged on the pipeline
// goroutine), which may grow the columns or refuse the record.
//
// Decoding each value into a map[string]any tree on the fetchers, then
// reading the maps back into Arrow, was half of the CPU of a backlog drain
// on a real broker: the decoding, the allocations, the collector marking
// the held trees (about five times the encoded size, all pointers), and
// the map lookups per column (docs/benchmarks.md's git history, "Run 9" and "JSON held
// as bytes").
//
// The check accepts a value only when decodeJSONFits would accept it and
// the sink's appender gives the same row as appending that decoded map
// (sinks/iceberg jsonrow.go): so it also refuses what the appender does
// not take without allocating or the decoded map would merge. Those go
// the decoding path:
//   - a key with an escape (its name must be decoded to be looked up);
//   - a key repeated in one object (the map keeps one of the values);
//   - a key the columns do not have (decoding it adds a column).
// FuzzFitsJSON holds fitsJSON to decodeJSONFits on arbitrary input.

// fitsJSON reports whether data is one JSON object that decoding against
// shape would accept without changing shape, with none of the keys listed
// above. It never changes shape and never allocates on its accepting path
// (BenchmarkFitsJSON).
func fitsJSON(shape *records.Shape, data []byte, lim records.Limits) bool {
	var c checker
	return c.fits(shape, data, lim)
}

// FitsJSON is fitsJSON for the sinks' tests, which hold their appending of
// a record kept as JSON to the map it decodes to, for every value the
// check lets through.
func FitsJSON(shape *records.Shape, data []byte, lim records.Limits) bool {
	return fitsJSON(shape, data, lim)
}

// fits is fitsJSON reusing the checker's scratch (a fetcher keeps one), so
// that checking allocates nothing.
func (c *checker) fits(shape *records.Shape, data []byte, lim records.Limits) bool {
	// A refused walk leaves path and seen as they were at the refusal;
	// they are reset here, not unwound there.
	c.parser = parser{data: data, lim: lim, path: c.path[:0]}
	c.seen = c.seen[:0]
	c.ws()
	if c.pos >= len(data) || data[c.pos] != '{' {
		return false
	}
	if !c.object(shape) {
		return false
	}
	c.ws()
	return c.pos == len(data)
}

// checker walks a JSON value against a shape without building it. It
// shares the parser's scanning (whitespace, separators, keys, the depth
// limit) so both read the same document the same way.
type checker struct {
	parser
	seen []uint64 // one bit per field of each object being walked, stacked
}

func (c *checker) value(s *records.Shape) bool {
	c.ws()
	if c.pos >= len(c.data) {
		return false
	}
	switch ch := c.data[c.pos]; {
	case ch == 'n':
		return c.literal("null") == nil
	case ch == 't':
		return s.Kind == records.Bool && c.literal("true") == nil
	case ch == 'f':
		return s.Kind == records.Bool && c.literal("false") == nil
	case ch == '"':
		return s.Kind == records.String && c.str()
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.number(s)
	case ch == '[':
		return s.Kind == records.List && c.deeper() == nil && c.array(s)
	case ch == '{':
		return s.Kind == records.Struct && c.deeper() == nil && c.object(s)
	}
	return false
}

func (c *checker) array(s *records.Shape) bool {
	c.pos++
	c.ws()
	if c.pos < len(c.data) && c.data[c.pos] == ']' {
		c.pos++
		return true
	}
	c.path = append(c.path, "[]")
	for {
		if !c.value(s.Elem) {
			return false
		}
		done, err := c.separator(']', "array")
		if err != nil {
			return false
		}
		if done {
			c.path = c.path[:len(c.path)-1]
			return true
		}
	}
}

func (c *checker) object(s *records.Shape) bool {
	c.pos++ // {
	c.ws()
	if c.pos < len(c.data) && c.data[c.pos] == '}' {
		c.pos++
		return true
	}
	base := len(c.seen)
	for range (len(s.Fields) + 63) / 64 {
		c.seen = append(c.seen, 0)
	}
	next := 0
	for {
		c.ws()
		if c.pos >= len(c.data) || c.data[c.pos] != '"' {
			return false
		}
		raw, ok := c.plainKey()
		if !ok {
			return false // an escaped key, or a bad one
		}
		f := c.lookupBytes(s, raw, &next)
		if f == nil {
			return false // a new column
		}
		i := next - 1 // lookupBytes leaves next just past the match
		if c.seen[base+i/64]&(1<<(i%64)) != 0 {
			return false // a repeated key
		}
		c.seen[base+i/64] |= 1 << (i % 64)
		c.ws()
		if c.pos >= len(c.data) || c.data[c.pos] != ':' {
			return false
		}
		c.pos++
		c.path = append(c.path, f.Name)
		ok = c.value(f.Shape)
		c.path = c.path[:len(c.path)-1]
		if !ok {
			return false
		}
		done, err := c.separator('}', "object")
		if err != nil {
			return false
		}
		if done {
			c.seen = c.seen[:base]
			return true
		}
	}
}

// str checks the string at the current position: what parser.str
// decodes, with its escapes checked here as encoding/json checks them.
func (c *checker) str() bool {
	c.pos++ // opening quote
	for c.pos < len(c.data) {
		switch ch := c.data[c.pos]; {
		case ch == '"':
			c.pos++
			return true
		case ch == '\\':
			if !c.escape() {
				return false
			}
			continue
		case ch < 0x20:
			return false
		}
		c.pos++
	}
	return false
}

// escape checks one escape sequence at the current backslash and moves
// past it.
func (c *checker) escape() bool {
	if c.pos+1 >= len(c.data) {
		return false
	}
	switch c.data[c.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		c.pos += 2
		return true
	case 'u':
		if c.pos+6 > len(c.data) {
			return false
		}
		for _, h := range c.data[c.pos+2 : c.pos+6] {
			if !isHex(h) {
				return false
			}
		}
		c.pos += 6
		return true
	}
	return false
}

func isHex(b byte) bool {
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}

// number checks a number as parser.number decodes it against s: a long
// column takes an integer within int64, a double column any number
// within float64's range.
func (c *checker) number(s *records.Shape) bool {
	start := c.pos
	for c.pos < len(c.data) && isNumberByte(c.data[c.pos]) {
		c.pos++
	}
	n := c.data[start:c.pos]
	if !validNumber(n) {
		return false
	}
	integral, exp := true, false
	for _, b := range n {
		switch b {
		case '.':
			integral = false
		case 'e', 'E':
			integral, exp = false, true
		}
	}
	switch s.Kind {
	case records.Long:
		if !integral {
			return false // widens the column, or a fraction in a committed long
		}
		digits := len(n)
		if n[0] == '-' {
			digits--
		}
		if digits <= 18 {
			return true // within int64 without parsing
		}
		_, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil
	case records.Double:
		if !exp && len(n) <= 300 {
			return true // within float64's range without parsing
		}
		_, err := strconv.ParseFloat(string(n), 64)
		return err == nil
	}
	return false
}
