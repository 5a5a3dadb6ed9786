package catalog

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/names"
)

// ListNamespaces implements catalog.Catalog: every namespace below parent.
func (c *Catalog) ListNamespaces(_ context.Context, parent table.Identifier) ([]table.Identifier, error) {
	var out []table.Identifier
	c.readState(func(s *fsm.State) {
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
	if err := checkNamespace(ns, props); err != nil {
		return err
	}
	_, err := c.node.Apply(ctx, fsm.CreateNamespace{Parts: slices.Clone(ns), Props: props})
	return err
}

// EnsureNamespace creates a namespace with props unless it exists (an
// existing namespace keeps its properties).
func (c *Catalog) EnsureNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	if err := checkNamespace(ns, props); err != nil {
		return err
	}
	_, err := c.node.Apply(ctx, fsm.CreateNamespace{Parts: slices.Clone(ns), Props: props, IfNotExists: true})
	return err
}

// DropNamespace implements catalog.Catalog.
func (c *Catalog) DropNamespace(ctx context.Context, ns table.Identifier) error {
	_, err := c.node.Apply(ctx, fsm.DropNamespace{Parts: slices.Clone(ns)})
	return err
}

// CheckNamespaceExists implements catalog.Catalog.
func (c *Catalog) CheckNamespaceExists(_ context.Context, ns table.Identifier) (bool, error) {
	var ok bool
	c.readState(func(s *fsm.State) { _, ok = s.Namespaces[ledger.TableKey(ns)] })
	return ok, nil
}

// LoadNamespaceProperties implements catalog.Catalog.
func (c *Catalog) LoadNamespaceProperties(_ context.Context, ns table.Identifier) (iceberg.Properties, error) {
	var (
		props iceberg.Properties
		ok    bool
	)
	c.readState(func(s *fsm.State) {
		var n *fsm.Namespace
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
	// The map after the update is what the state keeps; removals are
	// bounded like keys so that no list of them fills the log either.
	merged := maps.Clone(before)
	for i, k := range removals {
		if err := names.CheckText(fmt.Sprintf("removals[%d]", i), k, names.MaxPropertyKey); err != nil || i >= names.MaxProperties {
			return catalog.PropertiesUpdateSummary{}, fmt.Errorf("%w: removals: at most %d keys of %d bytes", names.ErrInvalid, names.MaxProperties, names.MaxPropertyKey)
		}
		delete(merged, k)
	}
	maps.Copy(merged, updates)
	if err := names.CheckProperties("namespace properties", merged); err != nil {
		return catalog.PropertiesUpdateSummary{}, err
	}
	if _, err := c.node.Apply(ctx, fsm.UpdateNamespace{Parts: slices.Clone(ns), Removals: removals, Updates: updates}); err != nil {
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

// checkNamespace applies the naming rule and the property bounds (package
// names) before a namespace reaches the Raft log.
func checkNamespace(ns table.Identifier, props iceberg.Properties) error {
	if err := names.CheckNamespace("namespace", ns); err != nil {
		return err
	}
	return names.CheckProperties("namespace properties", props)
}
