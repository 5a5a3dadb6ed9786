package status

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// MaxTableFilter bounds the names a selection may list (table=...), so a
// request cannot make the node compare every table against an unbounded
// list.
const MaxTableFilter = 1000

// ErrBadSelection: a status request's table selection is malformed.
var ErrBadSelection = errors.New("bad table selection")

// Selection picks the tables a status report lists. A node of a thousand
// tables answers a 2 MB report (issue 38); an operator or a script that
// wants the degraded ones, one table, or a page of the list asks for just
// that. The zero Selection lists every table.
type Selection struct {
	Tables []string // exact names (namespace.name); any of them
	Query  string   // a case-insensitive substring of the name
	State  string   // one state (RUNNING, DEGRADED, ...)
	Offset int      // tables skipped of those that match, in name order
	Limit  int      // at most this many listed; 0: every one that matches
}

// TableSummary counts a report's tables before a selection: every table,
// those the selection matched (before Offset and Limit), and the tables
// in each state. It is what a console or a script reads first at many
// tables.
type TableSummary struct {
	Total   int            `json:"total"`
	Matched int            `json:"matched"`
	States  map[string]int `json:"states"`
}

// ParseSelection reads a Selection from a status request's query: table
// (repeatable), q, state, offset, limit. An unknown state, a negative or
// non-numeric offset or limit, or too many names are refused, naming the
// parameter.
func ParseSelection(q url.Values) (Selection, error) {
	s := Selection{Tables: q["table"], Query: strings.TrimSpace(q.Get("q")), State: strings.ToUpper(strings.TrimSpace(q.Get("state")))}
	if len(s.Tables) > MaxTableFilter {
		return Selection{}, fmt.Errorf("%w: table: %d names, at most %d", ErrBadSelection, len(s.Tables), MaxTableFilter)
	}
	if _, ok := stateRank[s.State]; s.State != "" && !ok {
		return Selection{}, fmt.Errorf("%w: state: %q is not a table state", ErrBadSelection, q.Get("state"))
	}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"offset", &s.Offset}, {"limit", &s.Limit}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Selection{}, fmt.Errorf("%w: %s: %q is not a count", ErrBadSelection, p.name, v)
		}
		*p.dst = n
	}
	return s, nil
}

// matches reports whether t is one the selection asks for (before the
// page).
func (s Selection) matches(t TableReport) bool {
	if s.State != "" && t.State != s.State {
		return false
	}
	if s.Query != "" && !strings.Contains(strings.ToLower(t.Table), strings.ToLower(s.Query)) {
		return false
	}
	if len(s.Tables) == 0 {
		return true
	}
	for _, name := range s.Tables {
		if name == t.Table {
			return true
		}
	}
	return false
}

// Select narrows rep's tables to the selection and its page, and sets
// rep.Summary from every table. The tables keep their order (by name).
func Select(rep Report, s Selection) Report {
	sum := &TableSummary{Total: len(rep.Tables), States: map[string]int{}}
	var out []TableReport
	for _, t := range rep.Tables {
		sum.States[t.State]++
		if !s.matches(t) {
			continue
		}
		sum.Matched++
		if sum.Matched <= s.Offset || s.Limit > 0 && len(out) >= s.Limit {
			continue
		}
		out = append(out, t)
	}
	if out == nil {
		out = []TableReport{}
	}
	rep.Tables, rep.Summary = out, sum
	return rep
}
