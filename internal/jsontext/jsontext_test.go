package jsontext

import "testing"

func TestDescribeAndSkipSpace(t *testing.T) {
	for doc, want := range map[string]string{
		` {"a":1}`: "an object", "\t\n[1]": "an array", ` "s"`: "a string", `true`: "a boolean",
		`null`: "null", `-12`: "an integer", `1.5`: "a fractional number", `1e3`: "a fractional number",
		`   `: "missing", `x`: "invalid",
	} {
		if got := Describe([]byte(doc), SkipSpace([]byte(doc), 0)); got != want {
			t.Errorf("Describe(%q) = %q, want %q", doc, got, want)
		}
	}
}
