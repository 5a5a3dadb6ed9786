// Package metaloc reads Iceberg metadata file locations
// (<dir>/<version>-<uuid>.metadata.json): their version number, and which of
// two locations of one table is later. The catalog of record and the catalog
// mirrors (Glue, REST) share it so they order versions the same way.
//
// A leaf: it imports only the standard library; anything may import it.
package metaloc

import (
	"path"
	"regexp"
	"strconv"
)

var versionRe = regexp.MustCompile(`/(\d+)-[^/]*\.metadata\.json(\.gz)?$`)

// Version returns the version number in a metadata file's location, -1 when
// its name has none.
func Version(loc string) int {
	m := versionRe.FindStringSubmatch(loc)
	if m == nil {
		return -1
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return v
}

// NewerThan reports whether location a is a later version of the same table
// than b: same metadata directory, higher version number. A location in
// another directory (a hand edit in a mirror) is never newer.
func NewerThan(a, b string) bool {
	if a == "" || path.Dir(a) != path.Dir(b) {
		return false
	}
	va, vb := Version(a), Version(b)
	return va >= 0 && vb >= 0 && va > vb
}
