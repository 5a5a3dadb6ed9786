package restcatalog

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// fakeCatalog is an in-memory catalog of record whose tables have real
// metadata files under dir, so that clients can load and scan them.
type fakeCatalog struct {
	dir string

	mu     sync.Mutex
	ns     map[string]iceberg.Properties
	tables map[string]string // ident joined by "." -> metadata location
	syncs  int
}

func newFake(dir string) *fakeCatalog {
	return &fakeCatalog{dir: dir, ns: map[string]iceberg.Properties{}, tables: map[string]string{}}
}

func (f *fakeCatalog) addNamespace(ns ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ns[strings.Join(ns, ".")] = iceberg.Properties{"owner": "floe"}
}

// addTable writes a table's first metadata file and registers it.
func (f *fakeCatalog) addTable(ident ...string) string {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
	loc := "file://" + filepath.Join(f.dir, strings.Join(ident, "/"))
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, loc, iceberg.Properties{table.PropertyFormatVersion: "2"})
	if err != nil {
		panic(err)
	}
	data, err := json.Marshal(meta)
	if err != nil {
		panic(err)
	}
	metaLoc := loc + "/metadata/00000-1.metadata.json"
	path := strings.TrimPrefix(metaLoc, "file://")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		panic(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tables[strings.Join(ident, ".")] = metaLoc
	return metaLoc
}

func (f *fakeCatalog) ListNamespaces(_ context.Context, parent table.Identifier) ([]table.Identifier, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []table.Identifier
	for k := range f.ns {
		ns := strings.Split(k, ".")
		if len(ns) > len(parent) && slices.Equal(ns[:len(parent)], parent) {
			out = append(out, ns)
		}
	}
	return out, nil
}

func (f *fakeCatalog) LoadNamespaceProperties(_ context.Context, ns table.Identifier) (iceberg.Properties, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.ns[strings.Join(ns, ".")]
	if !ok {
		return nil, fmt.Errorf("loading %v: %w", ns, catalog.ErrNoSuchNamespace)
	}
	return p, nil
}

func (f *fakeCatalog) ListTables(_ context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error] {
	f.mu.Lock()
	_, ok := f.ns[strings.Join(ns, ".")]
	var out []table.Identifier
	for k := range f.tables {
		id := strings.Split(k, ".")
		if slices.Equal(id[:len(id)-1], ns) {
			out = append(out, id)
		}
	}
	f.mu.Unlock()
	return func(yield func(table.Identifier, error) bool) {
		if !ok {
			// Like the catalog of record: the error names its argument.
			yield(nil, fmt.Errorf("listing tables of %s: %w", strings.Join(ns, "."), catalog.ErrNoSuchNamespace))
			return
		}
		for _, id := range out {
			if !yield(id, nil) {
				return
			}
		}
	}
}

func (f *fakeCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	f.mu.Lock()
	loc, ok := f.tables[strings.Join(ident, ".")]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("loading table %s: %w", strings.Join(ident, "."), catalog.ErrNoSuchTable)
	}
	return table.NewFromLocation(ctx, ident, loc, icebergio.LoadFSFunc(nil, loc), nil)
}

func (f *fakeCatalog) Sync(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	return nil
}
