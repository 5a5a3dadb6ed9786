package restcatalog

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

type listNamespacesResponse struct {
	NextPageToken string     `json:"next-page-token,omitempty"`
	Namespaces    [][]string `json:"namespaces"`
}

type getNamespaceResponse struct {
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

func nsKey(ns table.Identifier) string { return strings.Join(ns, "\x1f") }

// children returns the namespaces one level below parent. A namespace that
// exists only as the parent of others (a.b without a) counts as existing,
// so listing and loading agree.
func (h *Handler) children(r *http.Request, parent table.Identifier) ([]table.Identifier, bool, error) {
	all, err := h.cat.ListNamespaces(r.Context(), parent)
	if err != nil {
		return nil, false, fmt.Errorf("listing namespaces: %w", err)
	}
	seen := map[string]bool{}
	var out []table.Identifier
	for _, ns := range all {
		if len(ns) <= len(parent) || !slices.Equal(ns[:len(parent)], parent) {
			continue
		}
		child := slices.Clone(ns[:len(parent)+1])
		if k := nsKey(child); !seen[k] {
			seen[k] = true
			out = append(out, child)
		}
	}
	slices.SortFunc(out, func(a, b table.Identifier) int { return strings.Compare(nsKey(a), nsKey(b)) })
	return out, len(all) > 0, nil
}

// namespace returns a namespace's properties, or ErrNoSuchNamespace.
func (h *Handler) namespace(r *http.Request, ns table.Identifier) (map[string]string, error) {
	props, err := h.cat.LoadNamespaceProperties(r.Context(), ns)
	if err == nil {
		if props == nil {
			props = map[string]string{}
		}
		return props, nil
	}
	if !errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, fmt.Errorf("loading namespace %s: %w", strings.Join(ns, "."), err)
	}
	if _, implicit, cerr := h.children(r, ns); cerr == nil && implicit {
		return map[string]string{}, nil
	}
	return nil, fmt.Errorf("namespace %s does not exist: %w", strings.Join(ns, "."), catalog.ErrNoSuchNamespace)
}

// readNamespace makes the read as consistent as the request asks, then
// returns the namespace's properties, or ErrNoSuchNamespace.
func (h *Handler) readNamespace(r *http.Request, ns table.Identifier) (map[string]string, error) {
	if err := h.consistent(r); err != nil {
		return nil, err
	}
	return h.namespace(r, ns)
}

func (h *Handler) listNamespaces(w http.ResponseWriter, r *http.Request) {
	if err := h.consistent(r); err != nil {
		h.fail(w, r, err)
		return
	}
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		ns, err := parseNamespace(p)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if _, err := h.namespace(r, ns); err != nil {
			h.fail(w, r, err)
			return
		}
		parent = ns
	}
	kids, _, err := h.children(r, parent)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	keys := make([]string, len(kids))
	for i, k := range kids {
		keys[i] = nsKey(k)
	}
	from, to, next, err := page(r, keys)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	resp := listNamespacesResponse{NextPageToken: next, Namespaces: [][]string{}}
	for _, k := range kids[from:to] {
		resp.Namespaces = append(resp.Namespaces, k)
	}
	writeJSON(w, resp)
}

func (h *Handler) loadNamespace(w http.ResponseWriter, r *http.Request, ns table.Identifier) {
	props, err := h.readNamespace(r, ns)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, getNamespaceResponse{Namespace: ns, Properties: props})
}

func (h *Handler) namespaceExists(w http.ResponseWriter, r *http.Request, ns table.Identifier) {
	if _, err := h.readNamespace(r, ns); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
