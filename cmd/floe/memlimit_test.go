package main

import (
	"testing"

	"github.com/floe-io/floe/config"
)

func TestSoftMemoryLimit(t *testing.T) {
	none := func(string) string { return "" }
	set := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "3GiB"
		}
		return ""
	}
	for _, c := range []struct {
		name   string
		budget config.ByteSize
		env    func(string) string
		want   int64
	}{
		{"budget plus slack", 1 << 30, none, 1<<30 + 256<<20},
		{"the operator's GOMEMLIMIT wins", 1 << 30, set, 0},
		{"no budget", 0, none, 0},
	} {
		if got := softMemoryLimit(c.budget, c.env); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
