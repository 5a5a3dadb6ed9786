package cluster

import (
	"go/build"
	"strings"
	"testing"
)

const module = "github.com/floe-io/floe"

// TestSubpackageImports keeps the split honest: the state machine stays
// pure, and the subpackages depend on each other only downwards (fsm <-
// catalog <- recovery; fsm <- raftnode; cluster on top).
func TestSubpackageImports(t *testing.T) {
	banned := map[string][]string{
		"cluster/raftnode": {module + "/cluster", module + "/cluster/catalog", module + "/cluster/recovery"},
		"cluster/catalog":  {module + "/cluster", module + "/cluster/raftnode", module + "/cluster/recovery", "github.com/hashicorp/raft"},
		"cluster/recovery": {module + "/cluster", module + "/cluster/raftnode", "github.com/hashicorp/raft"},
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

// TestFSMIsPure: fsm and every Floe package it reaches import only the
// standard library, ledger and config (and config's YAML parser). No Raft,
// no iceberg-go, no clock or randomness packages.
func TestFSMIsPure(t *testing.T) {
	allowed := map[string]bool{module + "/ledger": true, module + "/config": true, "gopkg.in/yaml.v3": true}
	for _, imp := range imports(t, "cluster/fsm") {
		if !isStd(imp) && !allowed[imp] {
			t.Errorf("cluster/fsm imports %s", imp)
		}
		if imp == "time" || imp == "math/rand" || imp == "math/rand/v2" || imp == "crypto/rand" || imp == "os" || imp == "net" {
			t.Errorf("cluster/fsm imports %s: the FSM must not read the clock, draw randomness or do I/O", imp)
		}
	}
	for _, dep := range []string{"ledger", "config"} {
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
