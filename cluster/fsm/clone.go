package fsm

import (
	"maps"
	"slices"
)

// Clone returns a deep copy of the state that shares no map, slice or
// pointer with s. FSM.Snapshot takes it under the read lock, which is far
// cheaper than encoding the state there (BenchmarkSnapshotLockHeld), and
// the copy is encoded while Apply goes on. A field added to State must be
// copied here: TestCloneSharesNothing and TestCloneKeepsEveryField catch
// one that is not.
func (s *State) Clone() *State {
	out := &State{
		Namespaces: cloneMapPtr(s.Namespaces, (*Namespace).clone),
		Tables:     cloneMapPtr(s.Tables, (*Table).clone),
		Ledger:     s.Ledger.Clone(),
		Nodes:      cloneMapPtr(s.Nodes, (*Member).clone),
		Sources:    cloneMapPtr(s.Sources, func(t *TopicSource) *TopicSource { c := *t; return &c }),
		Committers: maps.Clone(s.Committers),
		Resumes:    cloneMapPtr(s.Resumes, (*TableResume).clone),
		Mappings:   cloneMapPtr(s.Mappings, (*Mapping).clone),
		Paused:     maps.Clone(s.Paused),
		PausedBy:   maps.Clone(s.PausedBy),
		Rewinds:    cloneMapPtr(s.Rewinds, (*TableRewind).clone),
		Proposals:  s.Proposals.clone(),
		Applied:    s.Applied,
		Skipped:    s.Skipped,
	}
	if s.SchemaRequests != nil {
		out.SchemaRequests = make(map[string][]SchemaRequest, len(s.SchemaRequests))
		for k, reqs := range s.SchemaRequests {
			c := slices.Clone(reqs)
			for i := range c {
				c[i].Shape = slices.Clone(c[i].Shape)
			}
			out.SchemaRequests[k] = c
		}
	}
	if s.LastBackup != nil {
		b := *s.LastBackup
		out.LastBackup = &b
	}
	return out
}

// cloneMapPtr copies a map of pointers, each value by clone (nil stays nil).
func cloneMapPtr[V any](m map[string]*V, clone func(*V) *V) map[string]*V {
	if m == nil {
		return nil
	}
	out := make(map[string]*V, len(m))
	for k, v := range m {
		if v != nil {
			v = clone(v)
		}
		out[k] = v
	}
	return out
}

func (n *Namespace) clone() *Namespace {
	return &Namespace{Parts: slices.Clone(n.Parts), Props: maps.Clone(n.Props)}
}

func (t *Table) clone() *Table {
	c := *t
	c.Ident = slices.Clone(t.Ident)
	c.Synced = maps.Clone(t.Synced)
	if t.Delta != nil {
		d := *t.Delta
		c.Delta = &d
	}
	return &c
}

func (m *Member) clone() *Member {
	c := *m
	c.Attrs = maps.Clone(m.Attrs)
	return &c
}

func (r *TableResume) clone() *TableResume {
	c := *r
	c.Skips = maps.Clone(r.Skips)
	return &c
}

func (m *Mapping) clone() *Mapping {
	return &Mapping{Name: m.Name, Table: m.Table.clone()}
}

func (r *TableRewind) clone() *TableRewind {
	c := *r
	c.From = slices.Clone(r.From)
	c.To = slices.Clone(r.To)
	return &c
}

func (w *ProposalWindow) clone() *ProposalWindow {
	if w == nil {
		return nil
	}
	return &ProposalWindow{ring: slices.Clone(w.ring), next: w.next, byID: maps.Clone(w.byID)}
}
