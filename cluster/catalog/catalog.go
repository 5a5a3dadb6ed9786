package catalog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/names"
)

// Catalog is the catalog of record: an iceberg-go catalog.Catalog whose
// pointers live in the replicated state. iceberg-go transactions commit
// through CommitTable, which writes the new metadata file and then applies
// one CommitTables entry.
type Catalog struct {
	node      Replica
	warehouse string
	props     iceberg.Properties // FileIO properties (s3.endpoint, ...)

	cache *metaCache // every table's newest metadata, parsed (metacache.go)
	// clock stamps added snapshots (stamp.go, stampclock.go).
	clock *stampClock
}

// ErrUnsupported: the catalog of record refuses an operation by design. The
// value is fsm.ErrUnsupported, so the RPC layer, which must not import the
// catalog, maps it over the wire.
var ErrUnsupported = fsm.ErrUnsupported

// Replica is what the catalog needs of the Raft node: reading the
// replicated state, proposing a command (forwarded to the leader and applied
// here before it returns), and waiting until an entry is applied here. The
// wiring adapts *raftnode.Node to it; the catalog never sees Raft.
type Replica interface {
	Read(fn func(*fsm.State))
	Apply(ctx context.Context, c fsm.Command) (uint64, error)
	WaitApplied(ctx context.Context, index uint64) error
}

// New returns the catalog of record on node, placing new tables under
// warehouse (file:// or s3:// URI) and opening files with props.
func New(node Replica, warehouse string, props iceberg.Properties) *Catalog {
	return &Catalog{node: node, warehouse: strings.TrimSuffix(warehouse, "/"), props: props, cache: newMetaCache(metadataCacheBytes),
		clock: newStampClock(func() time.Time { return time.Now().Round(0) }, time.Now)}
}

// CatalogType implements catalog.Catalog.
func (c *Catalog) CatalogType() catalog.Type { return "floe" }

// Props returns the FileIO properties tables are opened with.
func (c *Catalog) Props() iceberg.Properties { return c.props }

func (c *Catalog) fsF(loc string) table.FSysF { return icebergio.LoadFSFunc(c.props, loc) }

func (c *Catalog) readState(fn func(*fsm.State)) { c.node.Read(fn) }

// CreateTable implements catalog.Catalog.
func (c *Catalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	if err := validIdent(ident); err != nil {
		return nil, err
	}
	cfg := catalog.NewCreateTableCfg()
	for _, o := range opts {
		o(&cfg)
	}
	if err := names.CheckProperties("table properties", cfg.Properties); err != nil {
		return nil, err
	}
	nsParts := ident[:len(ident)-1]
	var (
		ns     *fsm.Namespace
		exists bool
	)
	c.readState(func(s *fsm.State) {
		if n, ok := s.Namespaces[ledger.TableKey(nsParts)]; ok {
			ns = &fsm.Namespace{Props: n.Props}
		}
		_, exists = s.Tables[ledger.TableKey(ident)]
	})
	if ns == nil {
		return nil, fmt.Errorf("creating table %s: %w", strings.Join(ident, "."), catalog.ErrNoSuchNamespace)
	}
	if exists {
		return nil, fmt.Errorf("creating table %s: %w", strings.Join(ident, "."), catalog.ErrTableAlreadyExists)
	}
	loc := cfg.Location
	if loc == "" {
		base := ns.Props["location"]
		if base == "" {
			base = c.warehouse + "/" + strings.Join(nsParts, ".")
		}
		loc = strings.TrimSuffix(base, "/") + "/" + ident[len(ident)-1]
	}
	props := iceberg.Properties{table.PropertyFormatVersion: "2"}
	for k, v := range cfg.Properties {
		props[k] = v
	}
	spec := cfg.PartitionSpec
	if spec == nil {
		spec = iceberg.UnpartitionedSpec
	}
	meta, err := table.NewMetadata(sc, spec, cfg.SortOrder, loc, props)
	if err != nil {
		return nil, fmt.Errorf("creating table %s: %w", strings.Join(ident, "."), err)
	}
	metaLoc, err := c.writeMetadata(ctx, meta, 0)
	if err != nil {
		return nil, fmt.Errorf("creating table %s: %w", strings.Join(ident, "."), err)
	}
	if idx, err := c.node.Apply(ctx, fsm.CreateTable{Ident: slices.Clone(ident), MetadataLocation: metaLoc}); err != nil {
		// A resent create whose first copy was applied is refused as
		// existing: the table is ours if it points at our metadata.
		if idx > 0 {
			_ = c.node.WaitApplied(ctx, idx)
		}
		if !c.swapsCurrent([]fsm.TableSwap{{Table: ledger.TableKey(ident), New: metaLoc}}) {
			return nil, err
		}
	}
	c.remember(metaLoc, meta)
	return table.New(ident, meta, metaLoc, c.fsF(metaLoc), c), nil
}

// MetadataLocation returns a table's current metadata location.
func (c *Catalog) MetadataLocation(ident table.Identifier) (string, error) {
	var loc string
	c.readState(func(s *fsm.State) {
		if t, ok := s.Tables[ledger.TableKey(ident)]; ok {
			loc = t.MetadataLocation
		}
	})
	if loc == "" {
		return "", fmt.Errorf("loading table %s: %w", strings.Join(ident, "."), catalog.ErrNoSuchTable)
	}
	return loc, nil
}

// LoadTable implements catalog.Catalog.
func (c *Catalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	loc, err := c.MetadataLocation(ident)
	if err != nil {
		return nil, err
	}
	meta, err := c.metadataAt(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("loading table %s: %w", strings.Join(ident, "."), err)
	}
	return table.New(ident, meta, loc, c.fsF(loc), c), nil
}

// ListTables implements catalog.Catalog.
func (c *Catalog) ListTables(_ context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error] {
	var (
		out   []table.Identifier
		found bool
	)
	nsKey := ledger.TableKey(namespace)
	c.readState(func(s *fsm.State) {
		_, found = s.Namespaces[nsKey]
		for _, key := range s.TableKeys() {
			t := s.Tables[key]
			if ledger.TableKey(t.Ident[:len(t.Ident)-1]) == nsKey {
				out = append(out, slices.Clone(t.Ident))
			}
		}
	})
	return func(yield func(table.Identifier, error) bool) {
		if !found {
			yield(nil, fmt.Errorf("listing tables of %s: %w", strings.Join(namespace, "."), catalog.ErrNoSuchNamespace))
			return
		}
		for _, id := range out {
			if !yield(id, nil) {
				return
			}
		}
	}
}

// DropTable implements catalog.Catalog. Files are kept; purging is the job of
// the maintenance commands.
func (c *Catalog) DropTable(ctx context.Context, ident table.Identifier) error {
	_, err := c.node.Apply(ctx, fsm.DropTable{Ident: slices.Clone(ident)})
	return err
}

// RenameTable implements catalog.Catalog. Floe derives table names from topic
// mappings, so renaming is done by changing the mapping, not the catalog.
func (c *Catalog) RenameTable(context.Context, table.Identifier, table.Identifier) (*table.Table, error) {
	return nil, fmt.Errorf("renaming a table: change its topic mapping instead: %w", ErrUnsupported)
}

// CheckTableExists implements catalog.Catalog.
func (c *Catalog) CheckTableExists(_ context.Context, ident table.Identifier) (bool, error) {
	_, err := c.MetadataLocation(ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return false, nil
	}
	return err == nil, err
}

// validIdent checks a table identifier with the one naming rule (package
// names), before anything reaches the Raft log or a path: a name too long
// for the file system would otherwise leave the table failing forever.
func validIdent(ident table.Identifier) error {
	if len(ident) < 2 {
		return fmt.Errorf("table identifier %v needs a namespace and a name", ident)
	}
	if err := names.CheckNamespace("namespace", ident[:len(ident)-1]); err != nil {
		return err
	}
	return names.Check("table name", ident[len(ident)-1])
}

var _ catalog.Catalog = (*Catalog)(nil)
