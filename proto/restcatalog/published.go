package restcatalog

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// published is a Catalog that shows only the tables published as Iceberg:
// a [delta] table's committer keeps Iceberg metadata as its own ledger,
// but the table is a Delta table to its readers, so the endpoint neither
// lists nor loads it (404 NoSuchTableException, as for a missing table).
type published struct {
	Catalog
	hide func(table.Identifier) bool
}

func (p published) ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	return func(yield func(table.Identifier, error) bool) {
		for id, err := range p.Catalog.ListTables(ctx, ns) {
			if err == nil && p.hide(id) {
				continue
			}
			if !yield(id, err) {
				return
			}
		}
	}
}

func (p published) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if p.hide(ident) {
		return nil, fmt.Errorf("loading table %s: published as a Delta table only: %w", strings.Join(ident, "."), catalog.ErrNoSuchTable)
	}
	return p.Catalog.LoadTable(ctx, ident)
}
