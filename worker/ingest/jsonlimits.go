package ingest

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/floe-io/floe/internal/records"
)

// limits are the table's: its mapping's, else the node's, else defaults.
func (p *Pipeline) limits() records.Limits {
	l := records.Limits{MaxDepth: p.mapping.MaxNestingDepth, MaxColumns: p.mapping.MaxColumns}
	if l.MaxDepth <= 0 {
		l.MaxDepth = p.n.Config.MaxNestingDepth
	}
	if l.MaxColumns <= 0 {
		l.MaxColumns = p.n.Config.MaxColumns
	}
	return l.WithDefaults()
}

// deeper refuses to enter a container at the current position when it
// would nest past the table's max_nesting_depth. The path holds one entry
// per level above the container's values, so its length is their depth.
func (p *parser) deeper() error {
	if len(p.path) >= p.lim.MaxDepth {
		return p.tooDeep()
	}
	return nil
}

func (p *parser) tooDeep() error {
	where := p.where()
	if where == "" {
		where = "(top)"
	}
	return fmt.Errorf("%w: field %s nests deeper than max_nesting_depth %d", records.ErrLimit, where, p.lim.MaxDepth)
}

// newName checks a field name the shape s does not have before it becomes
// a column: it must be valid UTF-8 as sent (raw is the name's bytes in the
// document; the parser replaces invalid bytes), have no control character,
// and not equal an existing or earlier-added field of s ignoring case.
func (p *parser) newName(s *records.Shape, name string, raw []byte) error {
	path := p.where()
	if len(p.adds) >= p.lim.MaxColumns { // also bounds the scans of p.adds
		return fmt.Errorf("%w: the record adds more than max_columns %d fields", records.ErrLimit, p.lim.MaxColumns)
	}
	if len(p.path) == 1 && len(name) >= len(records.MetadataPrefix) && strings.EqualFold(name[:len(records.MetadataPrefix)], records.MetadataPrefix) {
		return fmt.Errorf("%w: field %q collides with Floe's metadata columns (%s*, case-insensitive)", records.ErrLimit, path, records.MetadataPrefix)
	}
	if !utf8.Valid(raw) {
		return fmt.Errorf("%w: field %q: name is not valid UTF-8", records.ErrLimit, path)
	}
	if err := records.CheckName(name); err != nil {
		return fmt.Errorf("%w: field %q: %v", records.ErrLimit, path, err)
	}
	other := s.Collides(name)
	for _, a := range p.adds {
		if other == nil && a.parent == s && a.field.Name != name && strings.EqualFold(a.field.Name, name) {
			other = a.field
		}
	}
	if other != nil {
		return fmt.Errorf("%w: field %q collides with column %q (column names are case-insensitive)", records.ErrLimit, path, other.Name)
	}
	return nil
}

// checkColumns refuses a record whose new fields would take the table past
// max_columns. Only records that add fields pay for the count.
func (p *parser) checkColumns(shape *records.Shape) error {
	if len(p.adds) == 0 {
		return nil
	}
	n := shape.Columns(p.lim.MaxColumns)
	for _, a := range p.adds {
		n += 1 + a.field.Shape.Columns(p.lim.MaxColumns)
	}
	if n > p.lim.MaxColumns {
		return fmt.Errorf("%w: the record would take the table to more than max_columns %d columns (%d new fields)", records.ErrLimit, p.lim.MaxColumns, len(p.adds))
	}
	return nil
}
