package backend

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/names"
	"github.com/floe-io/floe/proto/admin"
)

// mappingNameRe: names of API mappings. Configuration mappings are named
// tables[i], which this never matches, so the two cannot collide.
var mappingNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// Mappings implements admin.Backend: this node's configuration mappings
// (tables[i]) then the replicated API mappings, by name.
func (b *Backend) Mappings(ctx context.Context) ([]admin.Mapping, error) {
	var out []admin.Mapping
	for i, t := range b.cfg.Tables {
		out = append(out, admin.Mapping{Name: fmt.Sprintf("tables[%d]", i), Source: admin.MappingFromConfig, Table: t})
	}
	b.raft.FSM().Read(func(s *fsm.State) {
		for _, name := range sortedNames(s.Mappings) {
			out = append(out, admin.Mapping{Name: name, Source: admin.MappingFromAPI, Table: s.Mappings[name].Table.Config()})
		}
	})
	return out, nil
}

func sortedNames(m map[string]*fsm.Mapping) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// PutMapping implements admin.Backend.
func (b *Backend) PutMapping(ctx context.Context, m admin.Mapping, create bool) (admin.WriteResult, error) {
	if err := b.ready(); err != nil {
		return admin.WriteResult{}, err
	}
	if strings.HasPrefix(m.Name, "tables[") {
		return admin.WriteResult{}, fmt.Errorf("%w: mapping %s comes from the configuration file: edit the file on every node", admin.ErrConflict, m.Name)
	}
	if !mappingNameRe.MatchString(m.Name) {
		return admin.WriteResult{}, fmt.Errorf("%w: mapping.name: %s: use 1 to 128 letters, digits, '_', '-' and '.'", admin.ErrInvalid, names.Preview(m.Name))
	}
	t := m.Table
	if err := b.cfg.ValidateMapping(&t, "mapping"); err != nil {
		return admin.WriteResult{}, fmt.Errorf("%w: %w", admin.ErrInvalid, apiFields(err))
	}
	for i, c := range b.cfg.Tables {
		if t.Topic != "" && c.Topic == t.Topic {
			return admin.WriteResult{}, fmt.Errorf("%w: mapping.topic: topic %s is already mapped by tables[%d] of the configuration, which routes first", admin.ErrConflict, t.Topic, i)
		}
	}
	want := fsm.Mapping{Name: m.Name, Table: fsm.SpecOf(t)}
	var cur *fsm.Mapping
	b.raft.FSM().Read(func(s *fsm.State) {
		if c, ok := s.Mappings[m.Name]; ok {
			cc := *c
			cur = &cc
		}
	})
	if cur != nil && cur.Same(&want) {
		return admin.WriteResult{Unchanged: true, Message: "mapping " + m.Name + " unchanged"}, nil
	}
	verb := "updated"
	if create {
		verb = "created"
	}
	return b.operatorCommand(ctx, fsm.PutMapping{Mapping: want, Create: create}, verb+" mapping "+m.Name)
}

// DeleteMapping implements admin.Backend.
func (b *Backend) DeleteMapping(ctx context.Context, name string) (admin.WriteResult, error) {
	if strings.HasPrefix(name, "tables[") {
		return admin.WriteResult{}, fmt.Errorf("%w: mapping %s comes from the configuration file: edit the file on every node", admin.ErrConflict, name)
	}
	return b.operatorCommand(ctx, fsm.DeleteMapping{Name: name}, "deleted mapping "+name)
}

// apiFields renames the configuration's field names in validation errors
// to the API's: the table name template is name in the configuration but
// table in a Mapping message (whose name is the mapping's own).
func apiFields(err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	var out []error
	for _, e := range joined.Unwrap() {
		if fe := (*config.FieldError)(nil); errors.As(e, &fe) && fe.Field == "mapping.name" {
			e = &config.FieldError{Field: "mapping.table", Msg: fe.Msg}
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
