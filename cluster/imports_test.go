// Package cluster holds no code: Floe's replicated state lives in its
// subpackages, and this test keeps their import rules.
//
//   - fsm: the pure state machine: state, the append-only command enum, one
//     apply function per command, snapshots, change notification (global
//     and per table). No Raft, no I/O, no clock.
//   - raftnode: hashicorp/raft, its transport and storage, the raft.FSM
//     adapter over fsm, the internal gRPC (forwarding to the leader, join,
//     leave, transfer), the autopilot, membership and drain.
//   - catalog: the catalog of record as an iceberg-go catalog.Catalog; it
//     writes metadata files and proposes commands through catalog.Replica.
//   - recovery: the state backup to the warehouse and recovery from it
//     (--recover).
//
// Callers import the subpackages. Package node (the wiring) connects the
// catalog to a Raft node (node.NewCatalog).
package cluster

import (
	"errors"
	"go/build"
	"strings"
	"testing"
)

const module = "github.com/floe-io/floe"

// TestSubpackageImports keeps the split honest: the state machine stays
// pure, and the subpackages depend on each other only downwards (fsm <-
// catalog <- recovery; fsm <- raftnode).
func TestSubpackageImports(t *testing.T) {
	banned := map[string][]string{
		"cluster/raftnode": {module + "/cluster/catalog", module + "/cluster/recovery"},
		"cluster/catalog":  {module + "/cluster/raftnode", module + "/cluster/recovery", "github.com/hashicorp/raft"},
		"cluster/recovery": {module + "/cluster/raftnode", "github.com/hashicorp/raft"},
	}
	for pkg, bans := range banned {
		for _, imp := range imports(t, pkg) {
			for _, b := range bans {
				if imp == b {
					t.Errorf("%s imports %s", pkg, imp)
				}
			}
		}
	}
}

// TestNoFacade: cluster/ holds only subpackages. The facade of aliases it
// once held is gone; callers name fsm, raftnode, catalog or recovery.
func TestNoFacade(t *testing.T) {
	p, err := build.Import(module+"/cluster", ".", 0)
	var noGo *build.NoGoError
	if err != nil && !errors.As(err, &noGo) {
		t.Fatalf("reading package cluster: %v", err)
	}
	if len(p.GoFiles)+len(p.CgoFiles) > 0 {
		t.Errorf("cluster/ has a package of its own again (%v): put the code in a subpackage", append(p.GoFiles, p.CgoFiles...))
	}
}

// TestFSMIsPure: fsm and every Floe package it reaches import only the
// standard library, internal/ledger and internal/config (and config's YAML parser). No Raft,
// no iceberg-go, no clock or randomness packages.
func TestFSMIsPure(t *testing.T) {
	allowed := map[string]bool{module + "/internal/ledger": true, module + "/internal/config": true, module + "/internal/names": true, "gopkg.in/yaml.v3": true}
	for _, imp := range imports(t, "cluster/fsm") {
		if !isStd(imp) && !allowed[imp] {
			t.Errorf("cluster/fsm imports %s", imp)
		}
		if imp == "time" || imp == "math/rand" || imp == "math/rand/v2" || imp == "crypto/rand" || imp == "os" || imp == "net" {
			t.Errorf("cluster/fsm imports %s: the FSM must not read the clock, draw randomness or do I/O", imp)
		}
	}
	for _, dep := range []string{"internal/ledger", "internal/config", "internal/names"} {
		for _, imp := range imports(t, dep) {
			if !isStd(imp) && !allowed[imp] {
				t.Errorf("%s (imported by cluster/fsm) imports %s", dep, imp)
			}
		}
	}
}

// imports returns the production (non-test) imports of a package of this
// module, by its path below the module.
func imports(t *testing.T, rel string) []string {
	t.Helper()
	p, err := build.Import(module+"/"+rel, ".", 0)
	if err != nil {
		t.Fatalf("reading package %s: %v", rel, err)
	}
	return p.Imports
}

func isStd(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }
