// Package procstatus reads this process's memory figures from Linux's
// /proc/self/status: the resident size and its high-water mark for the
// tests' memory measurements (internal/testing/rss), the file-backed
// resident pages for floe serve's soft memory limit (cmd/floe).
package procstatus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrUnsupported: no /proc/self/status (not Linux).
var ErrUnsupported = errors.New("memory figures are read from /proc/self/status (Linux only)")

// Parse returns the named fields of the text of a /proc/PID/status file,
// each a figure in kB, in bytes. A field that is absent is absent from the
// result; one that is not a kB figure is an error naming it.
func Parse(data []byte, keys ...string) (map[string]uint64, error) {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok || !want[string(k)] {
			continue
		}
		kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parsing %s in /proc/self/status: %w", k, err)
		}
		out[string(k)] = kb << 10
	}
	return out, nil
}

// Read parses /proc/self/status.
func Read(keys ...string) (map[string]uint64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return Parse(data, keys...)
}
