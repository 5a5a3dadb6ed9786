package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/floe-io/floe/internal/ledger"
)

// Operator commands of the admin API: topic mappings made through the API,
// pausing a table, and rewinding a table's positions.

// Mapping is a topic mapping made through the admin API. Mappings from a
// node's configuration file are not replicated: every node reads its own.
type Mapping struct {
	Name  string    `json:"name"`
	Table TableSpec `json:"table"`
}

// Same reports whether two mappings have the same content.
func (m *Mapping) Same(o *Mapping) bool {
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(o)
	return bytes.Equal(a, b)
}

// PutMapping creates (Create) or replaces a mapping. Creating one that
// exists with the same content is a no-op; with other content it is
// refused, as is replacing one that does not exist. The proposer validates
// the mapping: the FSM only keeps names unique.
type PutMapping struct {
	Mapping Mapping `json:"mapping"`
	Create  bool    `json:"create,omitempty"`
}

func (PutMapping) Type() CommandType { return CmdPutMapping }

// contentLevel: a mapping that sets a table setting of a later level needs
// every member to know it (see TableSpec.Level).
func (c PutMapping) contentLevel() int { return c.Mapping.Table.Level() }

// DeleteMapping removes a mapping: its topics stop flowing into tables on
// every node; the tables and their data stay.
type DeleteMapping struct {
	Name string `json:"name"`
}

func (DeleteMapping) Type() CommandType { return CmdDeleteMapping }

// PauseTable stops a table's ingestion on every node until a ResumeTable.
type PauseTable struct {
	Table string `json:"table"` // table key
	At    int64  `json:"at"`    // unix ms, stamped by the proposer
	// By is who asked (the admin API's caller: a token's fingerprint or a
	// client certificate's subject). Optional: older proposers leave it out.
	By string `json:"by,omitempty"`
}

func (PauseTable) Type() CommandType { return CmdPauseTable }

// RewindTable moves a table's partitions to new offsets (earlier: the
// records are consumed again; later: the records between are skipped). All
// pending entries of the table are dropped (their files become orphans) and
// every partition's ledger end falls back to its committed offset, so every
// pipeline of the table restarts from the ledger. With Replace, the table's
// committer first deletes the rows at or after the new offsets of the moved
// partitions and records that with the delete's own CommitTables (RewindGen);
// until then it commits nothing else to the table.
type RewindTable struct {
	Table   string           `json:"table"` // table key
	To      []RewindPosition `json:"to"`
	Replace bool             `json:"replace,omitempty"`
	At      int64            `json:"at"`           // unix ms, stamped by the proposer
	By      string           `json:"by,omitempty"` // who asked, as PauseTable.By
}

func (RewindTable) Type() CommandType { return CmdRewindTable }

// RewindPosition is one partition's offset in a rewind.
type RewindPosition struct {
	ledger.TopicPartition
	Offset int64 `json:"offset"`
}

// TableRewind is the replicated record of a table's last rewind.
type TableRewind struct {
	// Gen grows by one with every rewind of the table.
	Gen     uint64           `json:"gen"`
	Replace bool             `json:"replace,omitempty"`
	At      int64            `json:"at"`
	From    []RewindPosition `json:"from"` // committed offsets before
	To      []RewindPosition `json:"to"`
	// ReplaceDone: the committer deleted the rows at or after To.
	ReplaceDone bool `json:"replace_done,omitempty"`
	// DeletedRows counts the rows the replace delete removed.
	DeletedRows int64 `json:"deleted_rows,omitempty"`
	// By is who asked for the rewind (RewindTable.By).
	By string `json:"by,omitempty"`
}

// ReplacePending reports whether the committer still has to delete rows
// before it may commit anything else to the table.
func (r *TableRewind) ReplacePending() bool { return r != nil && r.Replace && !r.ReplaceDone }

func applyPutMapping(s *State, c *PutMapping) error {
	m := c.Mapping
	if m.Name == "" {
		return fmt.Errorf("putting mapping: empty name")
	}
	cur, ok := s.Mappings[m.Name]
	switch {
	case c.Create && ok && cur.Same(&m):
		return nil
	case c.Create && ok:
		return fmt.Errorf("creating mapping %s: %w", m.Name, ErrMappingExists)
	case !c.Create && !ok:
		return fmt.Errorf("updating mapping %s: %w", m.Name, ErrNoSuchMapping)
	}
	if s.Mappings == nil {
		s.Mappings = map[string]*Mapping{}
	}
	s.Mappings[m.Name] = &m
	return nil
}

func applyDeleteMapping(s *State, c *DeleteMapping) error {
	if _, ok := s.Mappings[c.Name]; !ok {
		return fmt.Errorf("deleting mapping %s: %w", c.Name, ErrNoSuchMapping)
	}
	delete(s.Mappings, c.Name)
	return nil
}

// knownTable reports whether a table exists or a registered source routes
// into it (a table can be operated before its first commit).
func knownTable(s *State, table string) bool {
	if table == "" {
		return false
	}
	known := s.Tables[table] != nil
	for _, src := range s.Sources {
		known = known || src.Table == table
	}
	return known
}

func applyPauseTable(s *State, c *PauseTable) error {
	if !knownTable(s, c.Table) {
		return fmt.Errorf("pausing table %s: %w", ledger.DisplayName(c.Table), ErrNoSuchTable)
	}
	if s.Paused == nil {
		s.Paused = map[string]int64{}
	}
	if _, ok := s.Paused[c.Table]; !ok {
		s.Paused[c.Table] = c.At
		if c.By != "" {
			if s.PausedBy == nil {
				s.PausedBy = map[string]string{}
			}
			s.PausedBy[c.Table] = c.By
		}
	}
	return nil
}

func applyRewindTable(s *State, c *RewindTable) error {
	if !knownTable(s, c.Table) {
		return fmt.Errorf("rewinding table %s: %w", ledger.DisplayName(c.Table), ErrNoSuchTable)
	}
	if len(c.To) == 0 {
		return fmt.Errorf("rewinding table %s: no partition named: %w", ledger.DisplayName(c.Table), ledger.ErrInvalidEntry)
	}
	for _, p := range c.To {
		if p.Topic == "" || p.Partition < 0 || p.Offset < 0 {
			return fmt.Errorf("rewinding table %s: invalid position %s offset %d: %w", ledger.DisplayName(c.Table), p.TopicPartition, p.Offset, ledger.ErrInvalidEntry)
		}
	}
	prev := s.Rewinds[c.Table]
	rw := &TableRewind{Replace: c.Replace, At: c.At, To: slices.Clone(c.To), By: c.By}
	if prev != nil {
		rw.Gen = prev.Gen
		// A replace still pending stays owed for the partitions this rewind
		// does not move: carry it by keeping the older target where it is
		// lower, so the committer deletes the union.
		if prev.ReplacePending() {
			rw.Replace = true
			rw.To = mergeLower(rw.To, prev.To)
		}
	}
	rw.Gen++
	offs := s.Ledger.Offsets[c.Table]
	if offs == nil {
		offs = map[string]*ledger.Offsets{}
		s.Ledger.Offsets[c.Table] = offs
	}
	// Dropped entries: every partition's end falls back to its committed.
	delete(s.Ledger.Pending, c.Table)
	for _, o := range offs {
		o.End = o.Committed
	}
	for _, p := range c.To {
		o := offs[p.TopicPartition.String()]
		if o == nil {
			o = &ledger.Offsets{Start: p.Offset, Committed: p.Offset, End: p.Offset}
			offs[p.TopicPartition.String()] = o
			rw.From = append(rw.From, RewindPosition{TopicPartition: p.TopicPartition, Offset: -1})
			continue
		}
		rw.From = append(rw.From, RewindPosition{TopicPartition: p.TopicPartition, Offset: o.Committed})
		o.Committed, o.End = p.Offset, p.Offset
		o.Start = min(o.Start, p.Offset)
		o.NewestTS = 0 // the replay commits older records again
	}
	if r := s.Resumes[c.Table]; r != nil {
		r.Skips = nil // skips name records of the old position
	}
	if s.Rewinds == nil {
		s.Rewinds = map[string]*TableRewind{}
	}
	s.Rewinds[c.Table] = rw
	return nil
}

// mergeLower returns a's positions plus b's partitions missing in a, and for
// partitions in both the lower offset.
func mergeLower(a, b []RewindPosition) []RewindPosition {
	out := slices.Clone(a)
	for _, pb := range b {
		i := slices.IndexFunc(out, func(p RewindPosition) bool { return p.TopicPartition == pb.TopicPartition })
		if i < 0 {
			out = append(out, pb)
		} else {
			out[i].Offset = min(out[i].Offset, pb.Offset)
		}
	}
	return out
}

// applyRewindDone is called by CommitTables carrying RewindGen: the commit
// is the replace delete of that rewind.
func checkRewindDone(s *State, table string, gen uint64) error {
	rw := s.Rewinds[table]
	if rw == nil || rw.Gen != gen || !rw.ReplacePending() {
		return fmt.Errorf("committing replace delete of table %s rewind %d: %w", ledger.DisplayName(table), gen, ErrStaleRewind)
	}
	return nil
}
