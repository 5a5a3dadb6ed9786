package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/ledger"
)

// Catalog is the catalog of record: an iceberg-go catalog.Catalog whose
// pointers live in the replicated state. iceberg-go transactions commit
// through CommitTable, which writes the new metadata file and then applies
// one CommitTables entry.
type Catalog struct {
	node      *Node
	warehouse string
	props     iceberg.Properties // FileIO properties (s3.endpoint, ...)

	mu    sync.Mutex
	cache map[string]table.Metadata // metadata location -> parsed metadata
	order []string
}

const metadataCacheSize = 64

// NewCatalog returns the catalog of record on node, placing new tables under
// warehouse (file:// or s3:// URI) and opening files with props.
func NewCatalog(node *Node, warehouse string, props iceberg.Properties) *Catalog {
	return &Catalog{node: node, warehouse: strings.TrimSuffix(warehouse, "/"), props: props, cache: map[string]table.Metadata{}}
}

// CatalogType implements catalog.Catalog.
func (c *Catalog) CatalogType() catalog.Type { return "floe" }

// Props returns the FileIO properties tables are opened with.
func (c *Catalog) Props() iceberg.Properties { return c.props }

func (c *Catalog) fsF(loc string) table.FSysF { return icebergio.LoadFSFunc(c.props, loc) }

func (c *Catalog) readState(fn func(*State)) { c.node.FSM().Read(fn) }

// CreateTable implements catalog.Catalog.
func (c *Catalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	if err := validIdent(ident); err != nil {
		return nil, err
	}
	cfg := catalog.NewCreateTableCfg()
	for _, o := range opts {
		o(&cfg)
	}
	nsParts := ident[:len(ident)-1]
	var (
		ns     *Namespace
		exists bool
	)
	c.readState(func(s *State) {
		if n, ok := s.Namespaces[ledger.TableKey(nsParts)]; ok {
			ns = &Namespace{Props: n.Props}
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
	if idx, err := c.node.Apply(ctx, CreateTable{Ident: slices.Clone(ident), MetadataLocation: metaLoc}); err != nil {
		// A resent create whose first copy was applied is refused as
		// existing: the table is ours if it points at our metadata.
		if idx > 0 {
			_ = c.node.FSM().WaitApplied(ctx, idx)
		}
		if !c.swapsCurrent([]TableSwap{{Table: ledger.TableKey(ident), New: metaLoc}}) {
			return nil, err
		}
	}
	c.remember(metaLoc, meta)
	return table.New(ident, meta, metaLoc, c.fsF(metaLoc), c), nil
}

// writeMetadata writes meta as version v of its table and returns where.
func (c *Catalog) writeMetadata(ctx context.Context, meta table.Metadata, v int) (string, error) {
	provider, err := table.LoadLocationProvider(meta.Location(), meta.Properties())
	if err != nil {
		return "", fmt.Errorf("locating metadata: %w", err)
	}
	loc, err := provider.NewTableMetadataFileLocation(v)
	if err != nil {
		return "", fmt.Errorf("locating metadata: %w", err)
	}
	fs, err := c.fsF(loc)(ctx)
	if err != nil {
		return "", fmt.Errorf("opening storage for %s: %w", loc, err)
	}
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("storage for %s is read-only", loc)
	}
	data, err := json.Marshal(meta)
	if err != nil {
		return "", fmt.Errorf("encoding metadata: %w", err)
	}
	if err := wfs.WriteFile(loc, data); err != nil {
		return "", fmt.Errorf("writing metadata %s: %w", loc, err)
	}
	return loc, nil
}

var metadataVersionRe = regexp.MustCompile(`/(\d+)-[^/]*\.metadata\.json(\.gz)?$`)

func metadataVersion(loc string) int {
	m := metadataVersionRe.FindStringSubmatch(loc)
	if m == nil {
		return -1
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return v
}

func (c *Catalog) remember(loc string, meta table.Metadata) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cache[loc]; ok {
		return
	}
	c.cache[loc] = meta
	c.order = append(c.order, loc)
	if len(c.order) > metadataCacheSize {
		delete(c.cache, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *Catalog) metadataAt(ctx context.Context, loc string) (table.Metadata, error) {
	c.mu.Lock()
	meta, ok := c.cache[loc]
	c.mu.Unlock()
	if ok {
		return meta, nil
	}
	fs, err := c.fsF(loc)(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening storage for %s: %w", loc, err)
	}
	rfs, ok := fs.(icebergio.ReadFileIO)
	if !ok {
		return nil, fmt.Errorf("storage for %s cannot read files", loc)
	}
	data, err := rfs.ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("reading metadata %s: %w", loc, err)
	}
	meta, err = table.ParseMetadataBytes(data)
	if err != nil {
		return nil, fmt.Errorf("parsing metadata %s: %w", loc, err)
	}
	c.remember(loc, meta)
	return meta, nil
}

// MetadataLocation returns a table's current metadata location.
func (c *Catalog) MetadataLocation(ident table.Identifier) (string, error) {
	var loc string
	c.readState(func(s *State) {
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

// CommitTable implements catalog.Catalog and table.CatalogIO.
func (c *Catalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	name := strings.Join(ident, ".")
	key := ledger.TableKey(ident)
	cur, err := c.MetadataLocation(ident)
	if err != nil {
		return nil, "", fmt.Errorf("committing table %s: %w", name, err)
	}
	base, err := c.metadataAt(ctx, cur)
	if err != nil {
		return nil, "", fmt.Errorf("committing table %s: %w", name, err)
	}
	for _, r := range reqs {
		if err := r.Validate(base); err != nil {
			// A failed requirement means someone committed in between:
			// iceberg-go retries ErrCommitFailed after refreshing.
			return nil, "", fmt.Errorf("committing table %s: %w", name, commitFailed("%v", err))
		}
	}
	updated, err := table.UpdateTableMetadata(base, updates, cur)
	if err != nil {
		return nil, "", fmt.Errorf("committing table %s: %w", name, err)
	}
	v := metadataVersion(cur)
	if v < 0 {
		return nil, "", fmt.Errorf("committing table %s: cannot parse metadata version of %s", name, cur)
	}
	newLoc, err := c.writeMetadata(ctx, updated, v+1)
	if err != nil {
		return nil, "", fmt.Errorf("committing table %s: %w", name, err)
	}
	swap := TableSwap{Table: key, Expected: cur, New: newLoc}
	in := ledger.IntentFrom(ctx)
	if in != nil && in.Stage {
		in.Staged = append(in.Staged, ledger.StagedSwap{Table: key, Expected: cur, New: newLoc})
		c.remember(newLoc, updated)
		return updated, newLoc, nil
	}
	cmd := CommitTables{Swaps: []TableSwap{swap}}
	if in != nil {
		cmd.Swaps = cmd.Swaps[:0]
		for _, st := range in.Staged {
			cmd.Swaps = append(cmd.Swaps, TableSwap{Table: st.Table, Expected: st.Expected, New: st.New})
		}
		cmd.Swaps = append(cmd.Swaps, swap)
		cmd.Table, cmd.Entries, cmd.Committer, cmd.CommitID, cmd.At = in.Table, in.Entries, in.Committer, in.CommitID, in.At
		cmd.RewindGen, cmd.DeletedRows = in.RewindGen, in.DeletedRows
	}
	if idx, err := c.node.Apply(ctx, cmd); err != nil {
		// A forwarded commit may have been applied although its answer was
		// lost (the leader died mid-call), and then sent again: the copy
		// is refused by the compare-and-swap. Read the state as of the
		// refusal to tell that apart from a real refusal.
		if idx > 0 {
			_ = c.node.FSM().WaitApplied(ctx, idx)
		}
		if c.swapsCurrent(cmd.Swaps) {
			c.remember(newLoc, updated)
			return updated, newLoc, nil
		}
		// When the FSM refused the swap, nothing points at the files just
		// written: remove them now rather than leave them to orphan
		// cleanup, so a recovery walk (recover.go) meets fewer candidates.
		// Staged files go only on a terminal refusal: iceberg-go retries
		// ErrCommitFailed with the same intent, which reuses them. Any
		// other error (a Raft timeout) is ambiguous: keep everything.
		terminal := ledger.Refused(err) || errors.Is(err, ErrStaleCommitter)
		if terminal || errors.Is(err, table.ErrCommitFailed) {
			dead := []string{newLoc}
			for i := 0; terminal && i < len(cmd.Swaps)-1; i++ {
				dead = append(dead, cmd.Swaps[i].New)
			}
			if fs, ferr := c.fsF(newLoc)(ctx); ferr == nil {
				for _, loc := range dead {
					if !c.isPointer(loc) {
						_ = fs.Remove(loc) // best effort: orphan cleanup is the fallback
					}
				}
			}
		}
		return nil, "", err
	}
	c.remember(newLoc, updated)
	return updated, newLoc, nil
}

// swapsCurrent reports whether every swap's new location is its table's
// current pointer: the commit took effect.
func (c *Catalog) swapsCurrent(swaps []TableSwap) bool {
	ok := len(swaps) > 0
	c.readState(func(s *State) {
		for _, sw := range swaps {
			if t, found := s.Tables[sw.Table]; !found || t.MetadataLocation != sw.New {
				ok = false
			}
		}
	})
	return ok
}

// isPointer reports whether loc is any table's current metadata location.
func (c *Catalog) isPointer(loc string) bool {
	found := false
	c.readState(func(s *State) {
		for _, t := range s.Tables {
			if t.MetadataLocation == loc {
				found = true
			}
		}
	})
	return found
}

// ListTables implements catalog.Catalog.
func (c *Catalog) ListTables(_ context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error] {
	var (
		out   []table.Identifier
		found bool
	)
	nsKey := ledger.TableKey(namespace)
	c.readState(func(s *State) {
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
	_, err := c.node.Apply(ctx, DropTable{Ident: slices.Clone(ident)})
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

// ListNamespaces implements catalog.Catalog: every namespace below parent.
func (c *Catalog) ListNamespaces(_ context.Context, parent table.Identifier) ([]table.Identifier, error) {
	var out []table.Identifier
	c.readState(func(s *State) {
		for _, ns := range s.Namespaces {
			if len(ns.Parts) > len(parent) && slices.Equal(ns.Parts[:len(parent)], parent) {
				out = append(out, slices.Clone(ns.Parts))
			}
		}
	})
	slices.SortFunc(out, func(a, b table.Identifier) int { return strings.Compare(path.Join(a...), path.Join(b...)) })
	return out, nil
}

// CreateNamespace implements catalog.Catalog.
func (c *Catalog) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	if len(ns) == 0 {
		return fmt.Errorf("creating namespace: empty name: %w", catalog.ErrNoSuchNamespace)
	}
	_, err := c.node.Apply(ctx, CreateNamespace{Parts: slices.Clone(ns), Props: props})
	return err
}

// EnsureNamespace creates a namespace with props unless it exists (an
// existing namespace keeps its properties).
func (c *Catalog) EnsureNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	_, err := c.node.Apply(ctx, CreateNamespace{Parts: slices.Clone(ns), Props: props, IfNotExists: true})
	return err
}

// DropNamespace implements catalog.Catalog.
func (c *Catalog) DropNamespace(ctx context.Context, ns table.Identifier) error {
	_, err := c.node.Apply(ctx, DropNamespace{Parts: slices.Clone(ns)})
	return err
}

// CheckNamespaceExists implements catalog.Catalog.
func (c *Catalog) CheckNamespaceExists(_ context.Context, ns table.Identifier) (bool, error) {
	var ok bool
	c.readState(func(s *State) { _, ok = s.Namespaces[ledger.TableKey(ns)] })
	return ok, nil
}

// LoadNamespaceProperties implements catalog.Catalog.
func (c *Catalog) LoadNamespaceProperties(_ context.Context, ns table.Identifier) (iceberg.Properties, error) {
	var (
		props iceberg.Properties
		ok    bool
	)
	c.readState(func(s *State) {
		var n *Namespace
		if n, ok = s.Namespaces[ledger.TableKey(ns)]; ok {
			props = iceberg.Properties{}
			for k, v := range n.Props {
				props[k] = v
			}
		}
	})
	if !ok {
		return nil, fmt.Errorf("loading namespace %s: %w", strings.Join(ns, "."), catalog.ErrNoSuchNamespace)
	}
	return props, nil
}

// UpdateNamespaceProperties implements catalog.Catalog.
func (c *Catalog) UpdateNamespaceProperties(ctx context.Context, ns table.Identifier, removals []string, updates iceberg.Properties) (catalog.PropertiesUpdateSummary, error) {
	before, err := c.LoadNamespaceProperties(ctx, ns)
	if err != nil {
		return catalog.PropertiesUpdateSummary{}, err
	}
	if _, err := c.node.Apply(ctx, UpdateNamespace{Parts: slices.Clone(ns), Removals: removals, Updates: updates}); err != nil {
		return catalog.PropertiesUpdateSummary{}, err
	}
	var sum catalog.PropertiesUpdateSummary
	for _, k := range removals {
		if _, ok := before[k]; ok {
			sum.Removed = append(sum.Removed, k)
		} else {
			sum.Missing = append(sum.Missing, k)
		}
	}
	for k := range updates {
		sum.Updated = append(sum.Updated, k)
	}
	slices.Sort(sum.Updated)
	return sum, nil
}

var identPartRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_\-]*$`)

func validIdent(ident table.Identifier) error {
	if len(ident) < 2 {
		return fmt.Errorf("table identifier %v needs a namespace and a name", ident)
	}
	for _, p := range ident {
		if !identPartRe.MatchString(p) {
			return fmt.Errorf("table identifier part %q: use letters, digits, _ and -", p)
		}
	}
	return nil
}
