package catalog

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/names"
)

// countingReplica is a Replica whose state has namespace db and which
// records every proposal instead of replicating it.
type countingReplica struct {
	mu      sync.Mutex
	st      *fsm.State
	applied []fsm.Command
}

func (r *countingReplica) Read(fn func(*fsm.State)) { fn(r.st) }

func (r *countingReplica) Apply(_ context.Context, c fsm.Command) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied = append(r.applied, c)
	return uint64(len(r.applied)), nil
}

func (r *countingReplica) WaitApplied(context.Context, uint64) error { return nil }

// TestNamesNeverReachTheLog: a name or property map breaking the rule is
// refused by the catalog of record before any proposal, whichever path
// creates it (a pipeline's table, a namespace, a property update).
func TestNamesNeverReachTheLog(t *testing.T) {
	ctx := context.Background()
	huge := strings.Repeat("n", 100<<20)
	long := strings.Repeat("t", 300)
	manyProps := iceberg.Properties{}
	for i := range names.MaxProperties + 1 {
		manyProps[strings.Repeat("k", i+1)] = "v"
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	for _, tc := range []struct {
		name string
		call func(c *Catalog) error
		want string
	}{
		{"300-character table", func(c *Catalog) error {
			_, err := c.CreateTable(ctx, table.Identifier{"db", long}, sc)
			return err
		}, "table name: 300 bytes"},
		{"NUL in table", func(c *Catalog) error {
			_, err := c.CreateTable(ctx, table.Identifier{"db", "a\x00b"}, sc)
			return err
		}, "U+0000"},
		{"table properties", func(c *Catalog) error {
			_, err := c.CreateTable(ctx, table.Identifier{"db", "t"}, sc, catalog.WithProperties(manyProps))
			return err
		}, "101 properties"},
		{"100 MB namespace", func(c *Catalog) error { return c.CreateNamespace(ctx, table.Identifier{huge}, nil) }, "namespace: 104857600 bytes"},
		{"100 MB namespace ensured", func(c *Catalog) error { return c.EnsureNamespace(ctx, table.Identifier{"ok", huge}, nil) }, "namespace[1]"},
		{"NUL in namespace", func(c *Catalog) error { return c.CreateNamespace(ctx, table.Identifier{"a\x00"}, nil) }, "U+0000"},
		{"100 MB property", func(c *Catalog) error {
			return c.CreateNamespace(ctx, table.Identifier{"big"}, iceberg.Properties{"k": huge})
		}, "longer than 4096"},
		{"property update", func(c *Catalog) error {
			_, err := c.UpdateNamespaceProperties(ctx, table.Identifier{"db"}, nil, manyProps)
			return err
		}, "101 properties"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := fsm.NewState()
			st.Namespaces[ledger.TableKey([]string{"db"})] = &fsm.Namespace{Parts: []string{"db"}, Props: map[string]string{}}
			r := &countingReplica{st: st}
			err := tc.call(New(r, "file:///tmp/wh", nil))
			if !errors.Is(err, names.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %.300v, want ErrInvalid with %q", err, tc.want)
			}
			if len(r.applied) != 0 {
				t.Fatalf("%d proposals reached the log", len(r.applied))
			}
		})
	}
}
