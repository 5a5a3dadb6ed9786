package restsync

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/floe-io/floe/sinks/sink"
)

// Drop implements catalogsync.Dropper: a table turned [delta] is published
// only as Delta, so it leaves the external Iceberg catalog. The entry is
// dropped without purge (purgeRequested=false: the catalog forgets it, the
// files are Floe's and stay), and only when it points into the table's
// metadata directory: an entry someone else registered under the name is
// left alone.
func (s *Syncer) Drop(ctx context.Context, t sink.SyncTable) error {
	name := strings.Join(t.Ident, ".")
	if err := s.c.init(ctx); err != nil {
		return fmt.Errorf("dropping %s from %s: %w", name, s.Name(), err)
	}
	ns, last := t.Ident[:len(t.Ident)-1], t.Ident[len(t.Ident)-1]
	tableURI := s.c.base() + "/namespaces/" + nsPath(ns) + "/tables/" + url.PathEscape(last)
	var cur loadResult
	status, err := s.c.do(ctx, "loading "+last, http.MethodGet, tableURI+"?snapshots=refs", nil, &cur, http.StatusOK, http.StatusNotFound)
	switch {
	case err != nil:
		return fmt.Errorf("dropping %s from %s: %w", name, s.Name(), err)
	case status == http.StatusNotFound:
		return nil // never registered, or dropped already
	case path.Dir(cur.MetadataLocation) != path.Dir(t.MetadataLocation):
		s.log.Info("rest catalog entry is not this table's; leaving it", "catalog", s.Name(), "table", name, "metadata", cur.MetadataLocation)
		return nil
	}
	if _, err := s.c.do(ctx, "dropping "+last, http.MethodDelete, tableURI+"?purgeRequested=false", nil, nil,
		http.StatusOK, http.StatusNoContent, http.StatusNotFound); err != nil {
		return fmt.Errorf("dropping %s from %s: %w", name, s.Name(), err)
	}
	s.log.Info("dropped table from rest catalog: the table is published as delta only", "catalog", s.Name(), "table", name)
	return nil
}
