package names

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // "" for accepted, else a part of the error
	}{
		{"plain", "orders_v2", ""},
		{"dash inside", "web-logs", ""},
		{"255 bytes", strings.Repeat("a", 255), ""},
		{"empty", "", "empty"},
		{"256 bytes", strings.Repeat("a", 256), "256 bytes, longer than 255"},
		{"300 characters", strings.Repeat("t", 300), "longer than 255"},
		{"100 MB", strings.Repeat("n", 100<<20), "104857600 bytes"},
		{"NUL byte", "ord\x00ers", `U+0000`},
		{"slash", "a/b", `'/'`},
		{"dot", "a.b", `'.'`},
		{"leading dash", "-x", "starts with '-'"},
		{"invalid UTF-8", "a\xffb", "byte 0xff"},
		{"unicode", "café", "U+00E9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check("table.name", tc.in)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", Preview(tc.in), err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "table.name") {
				t.Fatalf("Check(%s) = %v, want ErrInvalid naming table.name and %q", Preview(tc.in), err, tc.want)
			}
			if len(err.Error()) > 300 {
				t.Fatalf("error repeats the input: %d bytes", len(err.Error()))
			}
		})
	}
}

func TestCheckNamespaceAndProperties(t *testing.T) {
	many := map[string]string{}
	for i := range MaxProperties + 1 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"two parts", CheckNamespace("namespace", []string{"a", "b"}), ""},
		{"no parts", CheckNamespace("namespace", nil), "empty"},
		{"deep", CheckNamespace("namespace", strings.Split(strings.Repeat("a.", MaxNamespaceDepth)+"a", ".")), "levels"},
		{"bad part", CheckNamespace("namespace", []string{"a", "b\x00"}), "namespace[1]"},
		{"small props", CheckProperties("props", map[string]string{"location": "s3://b/x"}), ""},
		{"too many props", CheckProperties("props", many), "101 properties"},
		{"long key", CheckProperties("props", map[string]string{strings.Repeat("k", 256): "v"}), "props key"},
		{"long value", CheckProperties("props", map[string]string{"k": strings.Repeat("v", 4097)}), `props["k"]`},
		{"NUL in value", CheckProperties("props", map[string]string{"k": "a\x00"}), "control character"},
		{"empty key", CheckProperties("props", map[string]string{"": "v"}), "empty key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				if tc.err != nil {
					t.Fatalf("got %v, want nil", tc.err)
				}
				return
			}
			if tc.err == nil || !errors.Is(tc.err, ErrInvalid) || !strings.Contains(tc.err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrInvalid with %q", tc.err, tc.want)
			}
		})
	}
}
