package fsm

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/floe-io/floe/internal/ledger"
)

// RequestSchema asks a table's committer to evolve the table so that it
// holds Shape (the requesting pipeline's payload shape, as JSON; fields not
// yet committed are the ones to add or widen). The requesting pipeline
// writes no file that uses them until the request is gone from the state.
// The committer applies requests in order with its appends, fenced by its
// epoch; schema changes so have the table's single writer.
type RequestSchema struct {
	Table string          `json:"table"`
	ID    string          `json:"id"`
	Node  string          `json:"node"`
	Shape json.RawMessage `json:"shape"`
	At    int64           `json:"at"` // unix ms, stamped by the proposer
}

// SchemaApplied is the committer's answer to schema requests: with Err
// empty the requests named by IDs are applied (the schema commit came
// before in the log) and removed; otherwise they stay, carrying Err, and
// the committer retries. Fenced by the committer epoch.
type SchemaApplied struct {
	Table     string             `json:"table"`
	IDs       []string           `json:"ids"`
	Err       string             `json:"err,omitempty"`
	Committer *ledger.Assignment `json:"committer,omitempty"`
	At        int64              `json:"at"`
}

func (RequestSchema) Type() CommandType { return CmdRequestSchema }
func (SchemaApplied) Type() CommandType { return CmdSchemaApplied }

// SchemaRequest is a pending schema request of a table.
type SchemaRequest struct {
	ID    string          `json:"id"`
	Node  string          `json:"node"`
	Shape json.RawMessage `json:"shape"`
	At    int64           `json:"at"`
	Err   string          `json:"err,omitempty"` // the committer's last failure
}

// maxSchemaRequests bounds a table's pending requests: a request beyond it
// is refused (retryable by the pipeline once the committer catches up).
const maxSchemaRequests = 1024

func applyRequestSchema(s *State, c *RequestSchema) error {
	if !knownTable(s, c.Table) {
		return fmt.Errorf("requesting a schema of table %s: %w", ledger.DisplayName(c.Table), ErrNoSuchTable)
	}
	if c.ID == "" || len(c.Shape) == 0 || string(c.Shape) == "null" {
		return fmt.Errorf("requesting a schema of table %s: id and shape required", ledger.DisplayName(c.Table))
	}
	if s.SchemaRequests == nil {
		s.SchemaRequests = map[string][]SchemaRequest{}
	}
	reqs := s.SchemaRequests[c.Table]
	if slices.ContainsFunc(reqs, func(r SchemaRequest) bool { return r.ID == c.ID }) {
		return nil // a retried proposal
	}
	if len(reqs) >= maxSchemaRequests {
		return fmt.Errorf("requesting a schema of table %s: %d requests pending", ledger.DisplayName(c.Table), len(reqs))
	}
	s.SchemaRequests[c.Table] = append(reqs, SchemaRequest{ID: c.ID, Node: c.Node, Shape: c.Shape, At: c.At})
	return nil
}

func applySchemaApplied(s *State, c *SchemaApplied) error {
	if c.Committer != nil {
		if cur, ok := s.Committers[c.Table]; !ok || cur != *c.Committer {
			return fmt.Errorf("answering schema requests of table %s as %s epoch %d (committer is %s epoch %d): %w",
				ledger.DisplayName(c.Table), c.Committer.Node, c.Committer.Epoch, cur.Node, cur.Epoch, ErrStaleCommitter)
		}
	}
	reqs := s.SchemaRequests[c.Table]
	if len(reqs) == 0 {
		return nil
	}
	if c.Err != "" {
		for i := range reqs {
			if slices.Contains(c.IDs, reqs[i].ID) {
				reqs[i].Err = c.Err
			}
		}
		return nil
	}
	reqs = slices.DeleteFunc(slices.Clone(reqs), func(r SchemaRequest) bool { return slices.Contains(c.IDs, r.ID) })
	if len(reqs) == 0 {
		delete(s.SchemaRequests, c.Table)
		return nil
	}
	s.SchemaRequests[c.Table] = reqs
	return nil
}
