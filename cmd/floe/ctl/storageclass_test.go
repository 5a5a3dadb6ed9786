package ctl

import (
	"bytes"
	"regexp"
	"testing"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// TestMappingShowsStorageClass: mappings get prints the mapping's storage
// class, or that the bucket's default applies.
func TestMappingShowsStorageClass(t *testing.T) {
	for _, c := range []struct{ class, want string }{
		{"", `(?m)^storage_class:\s+bucket default$`},
		{"INTELLIGENT_TIERING", `(?m)^storage_class:\s+INTELLIGENT_TIERING$`},
	} {
		var out bytes.Buffer
		if err := writeMapping(&out, &adminv1.Mapping{Name: "m", Topic: "t", StorageClass: c.class}); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(c.want).MatchString(out.String()) {
			t.Errorf("storage class %q printed as\n%s", c.class, out.String())
		}
	}
}
