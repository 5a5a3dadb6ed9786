package ingest

import (
	"errors"
	"fmt"

	"github.com/floe-io/floe/internal/records"
)

// ErrIncompatibleSchema marks a registry schema the table cannot follow
// without rewriting data (a narrowed or changed type); the topic pauses
// with CONFIG_ISSUE naming the field, the column's type and the schema's.
var ErrIncompatibleSchema = errors.New("incompatible schema change")

// evolve makes table (the table's payload shape) able to hold values of
// schema, a registry schema's shape, following Iceberg's allowed changes:
// new fields become optional columns; int widens to long, float to double,
// a decimal's precision grows at the same scale. A field the schema no
// longer has keeps its column (null from then on). Every column is
// optional, so a required field turning optional changes nothing. Anything
// else is ErrIncompatibleSchema naming the field and both types; table is
// then left as it was. Changed fields are marked uncommitted so the next
// flush evolves the table first.
//
// A schema with a lower id than the newest the table follows is an older
// writer (records produced before the subject evolved, a replay): its
// narrower types are not a change, since its values fit the wider columns.
// Registries hand out ids in increasing order.
func evolve(table, schema *records.Shape, schemaID int) error {
	next := table.Clone()
	older := schemaID < table.SchemaID
	if err := evolveStruct(next, schema, "", schemaID, older); err != nil {
		return err
	}
	next.SchemaID = max(next.SchemaID, schemaID)
	*table = *next
	return nil
}

func evolveStruct(t, s *records.Shape, path string, id int, older bool) error {
	for _, sf := range s.Fields {
		p := fieldPath(path, sf.Name)
		tf := t.Lookup(sf.Name)
		if tf == nil {
			t.Fields = append(t.Fields, &records.Field{Name: sf.Name, Shape: sf.Shape.Clone()})
			continue
		}
		if err := evolveType(tf, tf.Shape, sf.Shape, p, id, older); err != nil {
			return err
		}
	}
	return nil
}

// evolveType brings column type t in line with schema type s; owner is the
// top-most field whose column changes (marked uncommitted on a change).
func evolveType(owner *records.Field, t, s *records.Shape, path string, id int, older bool) error {
	incompatible := func(why string) error {
		return fmt.Errorf("%w: field %s: column is %s, schema %d has %s%s", ErrIncompatibleSchema, path, t, id, s, why)
	}
	if t.Kind != s.Kind {
		switch {
		case t.Kind == records.Int && s.Kind == records.Long, t.Kind == records.Float && s.Kind == records.Double:
			t.Kind = s.Kind
			owner.Committed = false
			return nil
		case t.Kind == records.Long && s.Kind == records.Int, t.Kind == records.Double && s.Kind == records.Float:
			if older {
				return nil
			}
			return incompatible(" (narrowing)")
		}
		return incompatible("")
	}
	switch t.Kind {
	case records.Struct:
		before := len(t.Fields)
		if err := evolveStruct(t, s, path, id, older); err != nil {
			return err
		}
		if len(t.Fields) != before {
			owner.Committed = false
		}
	case records.List:
		return evolveType(owner, t.Elem, s.Elem, path+"[]", id, older)
	case records.Map:
		if t.Key.Kind != s.Key.Kind {
			return incompatible(" (map keys cannot change)")
		}
		return evolveType(owner, t.Elem, s.Elem, path+".value", id, older)
	case records.Decimal:
		switch {
		case t.Scale != s.Scale:
			return incompatible(" (a decimal's scale cannot change)")
		case s.Precision < t.Precision && older:
		case s.Precision < t.Precision:
			return incompatible(" (narrowing)")
		case s.Precision > t.Precision:
			t.Precision = s.Precision
			owner.Committed = false
		}
	case records.Fixed:
		if t.Size != s.Size {
			return incompatible("")
		}
	}
	return nil
}
