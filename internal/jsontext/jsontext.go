// Package jsontext holds the byte-level JSON scanning that Floe's two
// readers of JSON values share: the worker's decoder and check
// (worker/ingest) and the sink's appender of rows kept as JSON
// (sinks/iceberg), so both skip the same whitespace and name a value the
// same way in their errors. It has no dependencies.
package jsontext

import "bytes"

// SkipSpace returns the position of the first byte at or after pos that
// is not JSON whitespace.
func SkipSpace(data []byte, pos int) int {
	for pos < len(data) {
		switch data[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

// IsNumberByte reports whether c can appear in a JSON number.
func IsNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// Describe names the kind of the JSON value starting at pos, for error
// messages: "an object", "an integer", "missing" past the end, and so on.
func Describe(data []byte, pos int) string {
	if pos >= len(data) {
		return "missing"
	}
	switch c := data[pos]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		end := pos
		for end < len(data) && IsNumberByte(data[end]) {
			end++
		}
		if bytes.ContainsAny(data[pos:end], ".eE") {
			return "a fractional number"
		}
		return "an integer"
	}
	return "invalid"
}
