package fsm_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

func TestApplySchemaRequests(t *testing.T) {
	key := ledger.TableKey([]string{"db", "orders"})
	shape := json.RawMessage(`{"Kind":9}`)
	n1 := &ledger.Assignment{Node: "n1", Epoch: 1}
	req := func(id string) Command { return RequestSchema{Table: key, ID: id, Node: "n1", Shape: shape} }
	type want struct {
		ids  []string
		errs []string
	}
	cases := []struct {
		name    string
		steps   []Command
		wantErr error // of the last step; errInvalid: any
		want    want
	}{
		{name: "requests queue in order", steps: []Command{req("a"), req("b")}, want: want{ids: []string{"a", "b"}, errs: []string{"", ""}}},
		{name: "a retried request is kept once", steps: []Command{req("a"), req("a")}, want: want{ids: []string{"a"}, errs: []string{""}}},
		{name: "applied requests go", steps: []Command{req("a"), req("b"), SchemaApplied{Table: key, IDs: []string{"a"}, Committer: n1}},
			want: want{ids: []string{"b"}, errs: []string{""}}},
		{name: "all applied", steps: []Command{req("a"), SchemaApplied{Table: key, IDs: []string{"a"}, Committer: n1}}},
		{name: "a failure stays with its error", steps: []Command{req("a"), req("b"), SchemaApplied{Table: key, IDs: []string{"a"}, Err: "boom", Committer: n1}},
			want: want{ids: []string{"a", "b"}, errs: []string{"boom", ""}}},
		{name: "a stale committer is refused", steps: []Command{req("a"), SchemaApplied{Table: key, IDs: []string{"a"}, Committer: &ledger.Assignment{Node: "n2", Epoch: 1}}},
			wantErr: ErrStaleCommitter, want: want{ids: []string{"a"}, errs: []string{""}}},
		{name: "unknown table", steps: []Command{RequestSchema{Table: "db\x1fnope", ID: "a", Shape: shape}}, wantErr: catalog.ErrNoSuchTable},
		{name: "no shape", steps: []Command{RequestSchema{Table: key, ID: "a"}}, wantErr: errInvalid},
		{name: "answer with nothing pending", steps: []Command{SchemaApplied{Table: key, IDs: []string{"x"}, Committer: n1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := seeded(t)
			var err error
			for i, st := range c.steps {
				err = apply(t, f, uint64(100+i), st)
				if err != nil && i < len(c.steps)-1 {
					t.Fatalf("step %d %s: %v", i, st.Type(), err)
				}
			}
			switch {
			case c.wantErr == errInvalid && err == nil, c.wantErr != nil && c.wantErr != errInvalid && !errors.Is(err, c.wantErr):
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			case c.wantErr == nil && err != nil:
				t.Fatal(err)
			}
			var ids, errs []string
			f.Read(func(s *State) {
				for _, r := range s.SchemaRequests[key] {
					ids, errs = append(ids, r.ID), append(errs, r.Err)
				}
			})
			if !slices.Equal(ids, c.want.ids) || !slices.Equal(errs, c.want.errs) {
				t.Fatalf("requests %v errs %q, want %v %q", ids, errs, c.want.ids, c.want.errs)
			}
		})
	}
}
