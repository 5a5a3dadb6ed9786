package records

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults of the limits on what one record can make a table hold. The
// depth is of Jackson's order of magnitude (its default is 1,000) but kept
// low because Iceberg metadata is written per nesting level: building and
// marshaling a table's schema must stay cheap at the cap (sinks/iceberg
// measures it in TestDeepSchemaMetadataCost).
const (
	DefaultMaxNestingDepth = 64
	DefaultMaxColumns      = 1000
	// MaxNestingDepthCap and MaxColumnsCap bound what configuration may set.
	MaxNestingDepthCap = 256
	MaxColumnsCap      = 10000
)

// ErrLimit marks a record or schema beyond a table's limits (nesting
// depth, column count, column name rules); it wraps ErrBadRecord, so the
// record goes where the table's error mode says.
var ErrLimit = fmt.Errorf("%w: over the table's limits", ErrBadRecord)

// errBadName is why a name can never be a column.
var errBadName = errors.New("bad column name")

// Limits bound the shape of a table's values.
type Limits struct {
	// MaxDepth is how many levels of structs, lists and maps a value may
	// have, counted as JSON nests objects and arrays: the table's top
	// struct (the record's object) is level 1, a struct column level 2.
	MaxDepth int
	// MaxColumns is how many columns the table's payload may have,
	// counting every nested field, list element and map key and value.
	MaxColumns int
}

// WithDefaults fills zero limits with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxNestingDepth
	}
	if l.MaxColumns <= 0 {
		l.MaxColumns = DefaultMaxColumns
	}
	return l
}

// CheckName reports why name cannot be a column: it is empty, not valid
// UTF-8, or has a control character (NUL included). Query engines and
// catalogs (Glue, Hive) cannot name such a column, and some truncate at NUL.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", errBadName)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q is not valid UTF-8", errBadName, name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("%w: %q has a control character", errBadName, name)
	}
	return nil
}

// Collides returns the field of s whose name equals name ignoring case but
// not exactly (Spark, Trino, Athena and Glue resolve columns without case,
// so both could not be read), nil when none does.
func (s *Shape) Collides(name string) *Field {
	for _, f := range s.Fields {
		if f.Name != name && strings.EqualFold(f.Name, name) {
			return f
		}
	}
	return nil
}

// Columns counts the columns of a shape: every struct field, list element
// and map key and value, nested ones included. It stops counting past
// limit (returning limit+1), so a huge shape costs no more than the limit.
func (s *Shape) Columns(limit int) int {
	n := 0
	var walk func(*Shape)
	walk = func(s *Shape) {
		if s == nil || n > limit {
			return
		}
		for _, f := range s.Fields {
			n++
			walk(f.Shape)
		}
		if s.Key != nil {
			n++
			walk(s.Key)
		}
		if s.Elem != nil {
			n++
			walk(s.Elem)
		}
	}
	walk(s)
	return min(n, limit+1)
}

// Check verifies a shape (a table's payload struct, or a subtree of it
// whose top sits at depth base) against the limits: depth, column count,
// and column names (valid, no two in one struct equal ignoring case). The
// error names the first offending field by its path.
func (l Limits) Check(s *Shape, base int, path string) error {
	if err := l.checkTree(s, base, path); err != nil {
		return err
	}
	if n := s.Columns(l.MaxColumns); n > l.MaxColumns {
		return fmt.Errorf("%w: more than max_columns %d columns", ErrLimit, l.MaxColumns)
	}
	return nil
}

func (l Limits) checkTree(s *Shape, depth int, path string) error {
	if s == nil {
		return nil
	}
	if s.Kind == Struct || s.Kind == List || s.Kind == Map {
		if depth >= l.MaxDepth {
			return fmt.Errorf("%w: field %s nests deeper than max_nesting_depth %d", ErrLimit, orTop(path), l.MaxDepth)
		}
	}
	var seen map[string]string // lower-cased name -> name, for wide structs
	if len(s.Fields) > 1 {
		seen = make(map[string]string, len(s.Fields))
	}
	for _, f := range s.Fields {
		p := joinPath(path, f.Name)
		if err := CheckName(f.Name); err != nil {
			return fmt.Errorf("%w: field %s: %v", ErrLimit, p, err)
		}
		if seen != nil {
			low := strings.ToLower(f.Name)
			if g, ok := seen[low]; ok && g != f.Name {
				return fmt.Errorf("%w: field %s: collides with field %s (column names are case-insensitive)", ErrLimit, p, joinPath(path, g))
			}
			seen[low] = f.Name
		}
		if err := l.checkTree(f.Shape, depth+1, p); err != nil {
			return err
		}
	}
	if err := l.checkTree(s.Key, depth+1, path+"{}"); err != nil {
		return err
	}
	return l.checkTree(s.Elem, depth+1, path+"[]")
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func orTop(path string) string {
	if path == "" {
		return "(top)"
	}
	return path
}
