package ctl

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// tableSelection is floe status's --state, --match and --limit: at a
// thousand tables the full list is 1,000 lines (issue 38). With -o json
// it becomes GET /v1/status's query (the node narrows the report and
// counts every table in table_summary); the text output narrows the
// tables the admin API lists.
type tableSelection struct {
	state, match string
	limit        int
}

func (s *tableSelection) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.state, "state", "", "only tables in this state (RUNNING, DEGRADED, SUSPENDED, ...)")
	fs.StringVar(&s.match, "match", "", "only tables whose name contains this (case-insensitive)")
	fs.IntVar(&s.limit, "limit", 0, "at most this many tables, in name order (0: every one)")
}

// query is the selection as GET /v1/status parameters; the node refuses a
// malformed one, naming the parameter.
func (s tableSelection) query() url.Values {
	q := url.Values{}
	if s.state != "" {
		q.Set("state", s.state)
	}
	if s.match != "" {
		q.Set("q", s.match)
	}
	if s.limit != 0 {
		q.Set("limit", strconv.Itoa(s.limit))
	}
	return q
}

// pick narrows the listed tables to the selection; matched counts those
// that match before --limit.
func (s tableSelection) pick(tables []*adminv1.TableStatus) (out []*adminv1.TableStatus, matched int) {
	state, match := strings.ToUpper(s.state), strings.ToLower(s.match)
	for _, t := range tables {
		if state != "" && t.GetState() != state || match != "" && !strings.Contains(strings.ToLower(t.GetTable()), match) {
			continue
		}
		matched++
		if s.limit <= 0 || len(out) < s.limit {
			out = append(out, t)
		}
	}
	return out, matched
}
