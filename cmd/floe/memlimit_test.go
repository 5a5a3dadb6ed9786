package main

import (
	"math"
	"os"
	"testing"

	"github.com/floe-io/floe/internal/config"
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

func TestLimitBeside(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name           string
		limit, fileRes int64
		want           int64
	}{
		{"the file-backed pages and a 64th come out of the limit", 1280 * mib, 69 * mib, 1191 * mib},
		{"none resident: only the 64th", 1280 * mib, 0, 1260 * mib},
		{"at least half stays the runtime's", 1280 * mib, 1000 * mib, 640 * mib},
		{"no limit", 0, 69 * mib, 0},
		{"unbounded", math.MaxInt64, 69 * mib, math.MaxInt64},
	} {
		if got := limitBeside(c.limit, c.fileRes); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestFileResident(t *testing.T) {
	status := "Name:\tfloe\nVmRSS:\t 1229604 kB\nRssAnon:\t 1158612 kB\nRssFile:\t   70992 kB\nRssShmem:\t     100 kB\nThreads:\t12\n"
	if n, ok := fileResident([]byte(status)); !ok || n != (70992+100)<<10 {
		t.Fatalf("fileResident = %d, %v; want %d", n, ok, (70992+100)<<10)
	}
	if _, ok := fileResident([]byte("Name:\tfloe\n")); ok {
		t.Fatal("a status without RssFile reads as ok")
	}
	// This process's own, on Linux: its code is resident.
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if n, ok := fileResident(b); !ok || n <= 0 {
			t.Fatalf("own status: %d, %v", n, ok)
		}
	}
}
