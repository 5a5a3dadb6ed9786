package fsm

import (
	"fmt"

	"github.com/floe-io/floe/internal/ledger"
)

// ResumeSkip is one record an operator resumed a suspended table past.
type ResumeSkip struct {
	ledger.TopicPartition
	Offset int64 `json:"offset"`
}

// ResumeTable resumes a suspended or paused table on every node: each
// pipeline of the table un-suspends and un-pauses when the table's resume
// generation grows, and consumes the records at Skips as skipped (counted),
// whichever node fetches them, until the partition's committed offset
// passes them.
type ResumeTable struct {
	Table string       `json:"table"` // table key
	Skips []ResumeSkip `json:"skips,omitempty"`
	At    int64        `json:"at"` // unix ms, stamped by the proposer
}

func (ResumeTable) Type() CommandType { return CmdResumeTable }

// TableResume is the replicated resume state of one table. It is kept
// apart from Table because a table can suspend at its first record, before
// it exists in the catalog.
type TableResume struct {
	// Gen grows by one with every ResumeTable of the table.
	Gen uint64 `json:"gen"`
	// Skips maps "topic/partition" to the offset of a record to consume as
	// skipped; an entry goes once the partition's committed offset passes it.
	Skips map[string]int64 `json:"skips,omitempty"`
	At    int64            `json:"at,omitempty"` // unix ms of the last resume
}

// applyResumeTable raises the table's resume generation and records its
// skips. The table must exist or be the target of a registered source.
// Skips the table has already committed past are dropped.
func applyResumeTable(s *State, c *ResumeTable) error {
	if !knownTable(s, c.Table) {
		return fmt.Errorf("resuming table %s: %w", ledger.DisplayName(c.Table), ErrNoSuchTable)
	}
	for _, sk := range c.Skips {
		if sk.Topic == "" || sk.Partition < 0 || sk.Offset < 0 {
			return fmt.Errorf("resuming table %s: invalid skip %s offset %d", ledger.DisplayName(c.Table), sk.TopicPartition, sk.Offset)
		}
	}
	if s.Resumes == nil {
		s.Resumes = map[string]*TableResume{}
	}
	r := s.Resumes[c.Table]
	if r == nil {
		r = &TableResume{}
		s.Resumes[c.Table] = r
	}
	r.Gen++
	r.At = c.At
	delete(s.Paused, c.Table) // operate.go: a resume also ends a pause
	delete(s.PausedBy, c.Table)
	for _, sk := range c.Skips {
		if o, ok := s.Ledger.Position(c.Table, sk.TopicPartition); ok && o.Committed > sk.Offset {
			continue // committed past already
		}
		if r.Skips == nil {
			r.Skips = map[string]int64{}
		}
		r.Skips[sk.TopicPartition.String()] = sk.Offset
	}
	return nil
}

// clearPassedSkips drops the skips of a table whose partitions' committed
// offsets have passed them (called after a ledger commit).
func clearPassedSkips(s *State, table string) {
	r := s.Resumes[table]
	if r == nil {
		return
	}
	for key, off := range r.Skips {
		if o, ok := s.Ledger.Offsets[table][key]; ok && o.Committed > off {
			delete(r.Skips, key)
		}
	}
	if len(r.Skips) == 0 {
		r.Skips = nil
	}
}
