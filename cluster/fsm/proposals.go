package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/floe-io/floe/internal/ledger"
)

// A proposal id makes a command idempotent across resends. The proposer
// (raftnode) draws it once, before the first send, and every resend of the
// same bytes carries it; the FSM remembers the result of the last
// ProposalWindowSize proposals it applied and answers a repeat with that
// result instead of applying it again.
//
// In the log the id is the first member of the command's JSON object:
// type byte, then {"proposal_id":"<id>", ...the command's own fields}. A
// node older than the id ignores the unknown field (encoding/json does) and
// applies the entry as before; an entry without the id (written by an older
// node, or by Encode) applies as before and is never deduplicated.

// ProposalWindowSize is how many applied proposals the FSM remembers. It is
// part of the replicated behaviour: every replica evicts the same ids at the
// same entry, so changing it is a format change (bump the window's version).
// Resends happen within the proposer's apply timeout (seconds); 10,000
// proposals cover that at any rate Floe proposes.
const ProposalWindowSize = 10_000

// proposalWindowVersion is the format version of the window in snapshots.
const proposalWindowVersion = 1

const (
	proposalKey      = `{"proposal_id":"`
	maxProposalIDLen = 64
)

// EncodeProposal frames a command like Encode, with the proposal id id as
// the first member of its JSON object. id is 1 to 64 characters of
// [0-9A-Za-z._-], drawn by the proposer, never by the FSM.
func EncodeProposal(id string, c Command) ([]byte, error) {
	if !validProposalID(id) {
		return nil, fmt.Errorf("encoding %s: invalid proposal id %q", c.Type(), id)
	}
	return EncodeFor(ProtocolLevel, id, c)
}

func encodeProposal(id string, c Command) ([]byte, error) {
	if !validProposalID(id) {
		return nil, fmt.Errorf("encoding %s: invalid proposal id %q", c.Type(), id)
	}
	data, err := encodePlain(c)
	if err != nil {
		return nil, err
	}
	if len(data) < 3 || data[1] != '{' {
		return nil, fmt.Errorf("encoding %s: payload is not a JSON object", c.Type())
	}
	out := make([]byte, 0, len(data)+len(proposalKey)+len(id)+2)
	out = append(out, data[0])
	out = append(out, proposalKey...)
	out = append(out, id...)
	out = append(out, '"')
	if data[2] != '}' {
		out = append(out, ',')
	}
	return append(out, data[2:]...), nil
}

// ProposalID returns the proposal id of an encoded command, or "" when it
// carries none.
func ProposalID(data []byte) string {
	if len(data) < 1 {
		return ""
	}
	payload := data[1:]
	if !bytes.HasPrefix(payload, []byte(proposalKey)) {
		return ""
	}
	rest := payload[len(proposalKey):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || !validProposalID(string(rest[:end])) {
		return ""
	}
	return string(rest[:end])
}

func validProposalID(id string) bool {
	if id == "" || len(id) > maxProposalIDLen {
		return false
	}
	for _, r := range id {
		ok := r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// ProposalResult is what one applied proposal answered: nothing (Message
// empty), or a refusal, by the code of the sentinel it wraps (the codes the
// refusal crosses the internal RPC with) and its message.
type ProposalResult struct {
	ID      string `json:"id"`
	Index   uint64 `json:"index"` // the log entry that applied it
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Err rebuilds the answer: nil, or an error with the first answer's message
// that matches its sentinel with errors.Is.
func (r ProposalResult) Err() error {
	if r.Message == "" {
		return nil
	}
	return &recordedError{msg: r.Message, sentinel: sentinelOf(r.Code)}
}

// recordedError is a refusal answered again to a repeated proposal.
type recordedError struct {
	msg      string
	sentinel error // nil: the refusal wrapped no sentinel
}

func (e *recordedError) Error() string { return e.msg }
func (e *recordedError) Unwrap() error { return e.sentinel }

// Refusal pairs a sentinel an apply function refuses with and its code.
type Refusal struct {
	Code string
	Err  error
}

// refusalCodes names every sentinel an apply function refuses with. Codes
// are the internal RPC's too (raftnode sends a forwarded command's refusal
// by this code); they are stored in snapshots and cross the wire between
// versions: append only.
var refusalCodes = []Refusal{
	{Code: "stale_committer", Err: ErrStaleCommitter},
	{Code: "unsupported", Err: ErrUnsupported},
	{Code: "unknown_node", Err: ErrUnknownNode},
	{Code: "not_empty", Err: ErrNotEmpty},
	{Code: "commit_failed", Err: ErrCommitFailed},
	{Code: "stale_epoch", Err: ledger.ErrStaleEpoch},
	{Code: "gap", Err: ledger.ErrGap},
	{Code: "overlap", Err: ledger.ErrOverlap},
	{Code: "not_assigned", Err: ledger.ErrNotAssigned},
	{Code: "invalid_entry", Err: ledger.ErrInvalidEntry},
	{Code: "unknown_entry", Err: ledger.ErrUnknownEntry},
	{Code: "not_oldest", Err: ledger.ErrNotOldest},
	{Code: "no_such_table", Err: ErrNoSuchTable},
	{Code: "table_exists", Err: ErrTableAlreadyExists},
	{Code: "no_such_namespace", Err: ErrNoSuchNamespace},
	{Code: "namespace_exists", Err: ErrNamespaceAlreadyExists},
	{Code: "namespace_not_empty", Err: ErrNamespaceNotEmpty},
	{Code: "no_such_mapping", Err: ErrNoSuchMapping},
	{Code: "mapping_exists", Err: ErrMappingExists},
	{Code: "stale_rewind", Err: ErrStaleRewind},
}

// Refusals returns the code and sentinel of every refusal the FSM records,
// in the table's order: raftnode's wire codes start from it.
func Refusals() []Refusal { return slices.Clone(refusalCodes) }

// IsRefusal reports whether err is one of the refusals the FSM answers a
// command with (the table above). Its text names what was refused ("deleting
// mapping clicks: no such mapping"), so callers pass it on unwrapped.
func IsRefusal(err error) bool { return codeOf(err) != "" }

func codeOf(err error) string {
	for _, c := range refusalCodes {
		if errors.Is(err, c.Err) {
			return c.Code
		}
	}
	return ""
}

func sentinelOf(code string) error {
	for _, c := range refusalCodes {
		if c.Code == code {
			return c.Err
		}
	}
	return nil
}

func resultOf(id string, index uint64, err error) ProposalResult {
	r := ProposalResult{ID: id, Index: index}
	if err != nil {
		r.Code, r.Message = codeOf(err), err.Error()
		if r.Message == "" {
			r.Message = "refused"
		}
	}
	return r
}

// ProposalWindow holds the results of the last ProposalWindowSize applied
// proposals, oldest first. Only the FSM changes it, under its lock.
type ProposalWindow struct {
	ring []ProposalResult // grows to ProposalWindowSize, then wraps
	next int              // once full: the oldest slot, overwritten next
	byID map[string]int   // id -> slot in ring
}

// Lookup returns the recorded result of proposal id. A nil window holds
// nothing.
func (w *ProposalWindow) Lookup(id string) (ProposalResult, bool) {
	if w == nil || id == "" {
		return ProposalResult{}, false
	}
	i, ok := w.byID[id]
	if !ok {
		return ProposalResult{}, false
	}
	return w.ring[i], true
}

// Len returns how many proposals the window holds.
func (w *ProposalWindow) Len() int {
	if w == nil {
		return 0
	}
	return len(w.ring)
}

// add records a result, evicting the oldest once the window is full.
func (w *ProposalWindow) add(r ProposalResult) {
	if w.byID == nil {
		w.byID = map[string]int{}
	}
	if len(w.ring) < ProposalWindowSize {
		w.byID[r.ID] = len(w.ring)
		w.ring = append(w.ring, r)
		return
	}
	delete(w.byID, w.ring[w.next].ID)
	w.ring[w.next] = r
	w.byID[r.ID] = w.next
	w.next = (w.next + 1) % len(w.ring)
}

// ordered returns the results oldest first.
func (w *ProposalWindow) ordered() []ProposalResult {
	out := make([]ProposalResult, 0, len(w.ring))
	out = append(out, w.ring[w.next:]...)
	return append(out, w.ring[:w.next]...)
}

type proposalWindowJSON struct {
	Version int              `json:"version"`
	Applied []ProposalResult `json:"applied"` // oldest first
}

// MarshalJSON writes the window oldest first, so that a restored window
// evicts in the same order as the one it was taken from.
func (w *ProposalWindow) MarshalJSON() ([]byte, error) {
	return json.Marshal(proposalWindowJSON{Version: proposalWindowVersion, Applied: w.ordered()})
}

// UnmarshalJSON reads a window written by MarshalJSON; a window of a newer
// format is refused (ErrSnapshotVersion), like a newer snapshot.
func (w *ProposalWindow) UnmarshalJSON(data []byte) error {
	var in proposalWindowJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	if in.Version < 1 || in.Version > proposalWindowVersion {
		return fmt.Errorf("proposal window version %d (this node reads up to %d): %w", in.Version, proposalWindowVersion, ErrSnapshotVersion)
	}
	*w = ProposalWindow{}
	for _, r := range in.Applied {
		if r.ID == "" {
			return fmt.Errorf("proposal window: a result without an id")
		}
		if _, dup := w.byID[r.ID]; dup {
			return fmt.Errorf("proposal window: proposal %s recorded twice", r.ID)
		}
		w.add(r)
	}
	return nil
}
