package fsm

import (
	"fmt"
	"maps"

	"github.com/floe-io/floe/internal/ledger"
)

// applyRestoreState installs a recovered state into a new cluster. It is
// refused once the cluster has any table, source or offset, so a replayed
// or late RestoreState can never roll a live cluster back. Members that
// registered already stay; committer roles are left to the controller.
func applyRestoreState(s *State, c *RestoreState) error {
	if c.State == nil {
		return fmt.Errorf("restoring state: the command carries no state")
	}
	if len(s.Tables) > 0 || len(s.Sources) > 0 || len(s.Ledger.Offsets) > 0 || len(s.Ledger.Pending) > 0 {
		return fmt.Errorf("restoring state into a cluster with %d tables and %d sources: %w", len(s.Tables), len(s.Sources), ErrNotEmpty)
	}
	in := c.State
	l := in.Ledger
	if l == nil {
		l = ledger.New()
	}
	if len(l.Pending) > 0 {
		return fmt.Errorf("restoring state: %d tables have pending entries; a restored ledger holds committed offsets only", len(l.Pending))
	}
	offsets := l.Offsets
	if offsets == nil {
		offsets = map[string]map[string]*ledger.Offsets{}
	}
	check := &ledger.Ledger{Offsets: offsets, Pending: map[string][]ledger.Entry{}, Assignments: map[string]ledger.Assignment{}}
	if err := check.Validate(); err != nil {
		return fmt.Errorf("restoring state: ledger is inconsistent: %w", err)
	}
	for key, t := range in.Tables {
		if t == nil || len(t.Ident) < 2 || ledger.TableKey(t.Ident) != key || t.MetadataLocation == "" {
			return fmt.Errorf("restoring state: table %s is malformed", ledger.DisplayName(key))
		}
	}
	// Validation passed: apply. Namespaces merge (one the new cluster made
	// already takes the restored properties); epochs never go back.
	maps.Copy(s.Namespaces, in.Namespaces)
	s.Tables = in.Tables
	if s.Tables == nil {
		s.Tables = map[string]*Table{}
	}
	s.Sources = in.Sources
	if s.Sources == nil {
		s.Sources = map[string]*TopicSource{}
	}
	s.Ledger.Offsets = offsets
	for tp, a := range l.Assignments {
		if cur, ok := s.Ledger.Assignments[tp]; !ok || a.Epoch > cur.Epoch {
			s.Ledger.Assignments[tp] = a
		}
	}
	return nil
}
