package node

import (
	"strings"
	"sync"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/worker"
)

// storageClasses resolves a table's location, as objstore sees it in an
// upload's key (s3://bucket/path before data/), to the storage_class of
// the mapping that routes into the table now (objstore.AddStorageClasses).
// A table's location is its metadata location's directory above
// metadata/, which the replicated state holds; locations are cached by
// table key, since a table keeps its location for its life, and a location
// it does not know makes it look again (a table created since).
type storageClasses struct {
	fsm    *fsm.FSM
	worker *worker.Worker

	mu    sync.Mutex
	roots map[string]string // table location -> table key
}

func newStorageClasses(f *fsm.FSM, w *worker.Worker) *storageClasses {
	return &storageClasses{fsm: f, worker: w, roots: map[string]string{}}
}

// class is an objstore.ClassFunc: "" for a location that is no table of
// this node's state, or whose mapping sets none.
func (c *storageClasses) class(location string) string {
	key, ok := c.key(location)
	if !ok {
		return ""
	}
	return c.worker.StorageClass(key)
}

func (c *storageClasses) key(location string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if key, ok := c.roots[location]; ok {
		return key, true
	}
	roots := map[string]string{}
	c.fsm.Read(func(s *fsm.State) {
		for key, t := range s.Tables {
			if root, ok := tableLocation(t.MetadataLocation); ok {
				roots[root] = key
			}
		}
	})
	c.roots = roots
	key, ok := roots[location]
	return key, ok
}

// tableLocation is the location of the table whose metadata file is at
// metaLoc: <location>/metadata/<file>.
func tableLocation(metaLoc string) (string, bool) {
	i := strings.LastIndex(metaLoc, "/metadata/")
	if i < 0 {
		return "", false
	}
	return metaLoc[:i], true
}
