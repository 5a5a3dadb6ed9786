package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/floe-io/floe/"

// card is the design card's top level: every package of the module sits
// under one of these folders (DESIGN.md, "The rooms"). A new top-level
// folder is a change to the card, not a place to put a package.
var card = []string{"cmd", "cluster", "worker", "assignment", "sinks", "proto", "deploy", "internal", "test", "bench"}

// rules says, per package (a directory of the module), which of the module's
// packages its production files may import. A key ending in "/..." covers
// the directory and everything below it; the most specific key wins. An
// allowed entry ending in "/..." allows a whole subtree. "*" allows anything.
// Every package of the module must be covered: a new package means a new
// line here and in DESIGN.md.
var rules = map[string][]string{
	// internal/: the contract leaves every room shares, and small helpers.
	"internal/ledger":      nil,
	"internal/config":      {"internal/names"},
	"internal/records":     nil,
	"internal/status":      nil,
	"internal/metaloc":     nil,
	"internal/names":       nil,
	"internal/jsontext":    nil,                             // JSON scanning shared by the worker's decoder and the sink's appender
	"internal/objstore":    nil,                             // counts s3:// requests per table (iceberg-go's s3 FileIO, wrapped)
	"internal/membudget":   nil,                             // the one split of memory_budget
	"internal/profiling":   nil,                             // CPU and heap profiles of floe serve and the benches
	"internal/offsetcheck": {"sinks/iceberg"},               // the independent exactly-once reader of the demo and the tests
	"internal/embedded":    {"worker/schemas/registrytest"}, // the demo's and benches' in-process Kafka and registry
	"internal/procstatus":  nil,                             // /proc/self/status figures: the tests' RSS, floe serve's memory limit
	"internal/localfs":     nil,                             // file:// FileIO taking locations literally (partition paths)

	// cluster/: the replicated state. fsm is pure; raftnode runs it;
	// catalog and recovery do the I/O on top of it through small interfaces.
	"cluster/fsm":          {"internal/ledger", "internal/config"},
	"cluster/raftnode":     {"cluster/fsm", "cluster/tlsconf", "internal/ledger", "internal/config"},
	"cluster/tlsconf":      nil, // internal ports' mTLS and floe tls
	"cluster/catalog":      {"cluster/fsm", "internal/ledger", "internal/metaloc", "internal/names"},
	"cluster/recovery":     {"cluster/fsm", "cluster/catalog", "internal/ledger", "internal/config"},
	"cluster/internal/...": {"*"}, // test support (clustertest)

	// assignment/: pure plan and the leader-only controller.
	"assignment": {"internal/ledger"},

	// worker/: the record's path, never Raft, never the cluster packages.
	// Its registry decoders (worker/schemas) see only the record model.
	"worker/...":         {"worker/...", "internal/records", "internal/ledger", "internal/config", "sinks/sink", "internal/status", "internal/jsontext", "internal/membudget"},
	"worker/schemas":     {"internal/records"},
	"worker/schemas/...": {"internal/records", "worker/schemas"},

	// sinks/: one package per table format or catalog target, behind the
	// contract in sinks/sink.
	"sinks/sink":           {"internal/records", "internal/ledger", "internal/config"},
	"sinks/iceberg":        {"sinks/sink", "sinks/iceberg/upsert", "internal/records", "internal/ledger", "internal/metaloc", "internal/jsontext", "internal/localfs"},
	"sinks/delta":          {"sinks/sink", "internal/ledger"}, // the Delta log, Iceberg's follower: never Raft, never the worker
	"sinks/iceberg/upsert": {"sinks/sink", "internal/ledger"}, // the key index and the position deletes it plans: no sink state, no Raft
	"sinks/glue/...":       {"sinks/sink", "internal/metaloc"},
	"sinks/internal/...":   {"*"}, // test support: the catalog mirrors' conformance suite
	"sinks/restsync":       {"sinks/sink", "internal/metaloc", "proto/auth"},

	// proto/: the API room. The schema and its generated code, and every
	// surface an operator or a program talks to: the admin API and console,
	// bearer tokens, the Iceberg REST catalog, /metrics, webhooks.
	"proto/floe/...":        {"proto/floe/..."},
	"proto/auth":            {"internal/config"},
	"proto/admin":           {"proto/auth", "internal/config", "internal/status", "proto/floe/..."},
	"proto/restcatalog/...": {"proto/auth", "proto/restcatalog"},
	"proto/metrics":         {"internal/status"},
	"proto/notify":          {"internal/status"},

	// cmd/: parsing and wiring. node is the composition root; ctl is the
	// CLI's client of the admin API.
	"cmd/floe/ctl":  {"proto/floe/..."},
	"cmd/floe/node": {"*"},
	"cmd/...":       {"*"},
	"deploy":        nil,

	// bench/: floe bench (floebench) composes nodes like cmd/ does; the
	// real-broker benchmark's baseline is a user's own loop, no Floe.
	"bench/floebench": {"*"},
	"bench/...":       nil,

	// Test support: only tests import it (checked below).
	"internal/testing/...":    {"*"},
	"internal/testing/logbuf": nil, // a leaf: the tests of raftnode and cmd/floe share it
	"internal/archtest":       nil,
}

// testOnly are imports no production file may make, except in the packages
// named: fakes and fault injection live in tests; floe demo and the benches
// reach kfake and the fake registry through internal/embedded alone.
var testOnly = map[string][]string{
	module + "internal/testing/":           nil,
	module + "cluster/internal/":           nil,
	module + "worker/schemas/registrytest": {"internal/embedded"},
	module + "sinks/internal/":             nil,
	module + "sinks/glue/gluetest":         nil,
	module + "proto/restcatalog/spectest":  nil,
	"github.com/twmb/franz-go/pkg/kfake":   {"internal/embedded"},
	"github.com/hashicorp/raft":            {"cluster/raftnode", "cluster/recovery", "cluster/catalog", "cluster/internal/clustertest", "cmd/floe/node", "cmd/floe"},
}

// TestTopLevelIsTheCard: every folder at the module's root that holds Go
// code is one of the card's rooms.
func TestTopLevelIsTheCard(t *testing.T) {
	root := moduleRoot(t)
	for pkg := range productionImports(t, root) {
		top, _, _ := strings.Cut(pkg, "/")
		if pkg != "." && !contains(card, top) {
			t.Errorf("package %s sits in top-level folder %s, which is not one of the card's rooms %v", pkg, top, card)
		}
	}
}

func TestImportRules(t *testing.T) {
	root := moduleRoot(t)
	pkgs := productionImports(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found %d packages under %s: the walk is broken", len(pkgs), root)
	}
	for _, pkg := range sortedKeys(pkgs) {
		allowed, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("package %s has no import rule: add it to rules and to DESIGN.md's package list", pkg)
			continue
		}
		for imp, files := range pkgs[pkg] {
			if strings.HasPrefix(imp, module) && !permits(allowed, pkg, strings.TrimPrefix(imp, module)) {
				t.Errorf("%s imports %s (%s): DESIGN.md allows only %v", pkg, strings.TrimPrefix(imp, module), files[0], allowed)
			}
			for banned, except := range testOnly {
				if strings.HasPrefix(imp, banned) && !contains(except, pkg) && !isTestSupport(pkg) {
					t.Errorf("%s imports %s in production code (%s): allowed only in %v", pkg, imp, files[0], except)
				}
			}
		}
	}
}

// TestRulesCatchABreak checks the checker: the rules must refuse the imports
// the design forbids.
func TestRulesCatchABreak(t *testing.T) {
	for _, c := range []struct{ pkg, imp string }{
		{"worker", "cluster/fsm"},
		{"worker/ingest", "cluster/raftnode"},
		{"cluster/fsm", "cluster/raftnode"},
		{"cluster/fsm", "worker"},
		{"internal/records", "worker"},
		{"worker/schemas", "worker"},
		{"worker/schemas", "worker/ingest"},
		{"sinks/iceberg", "worker"},
		{"sinks/delta", "worker/commit"},
		{"sinks/delta", "cluster/fsm"},
		{"sinks/iceberg", "sinks/delta"}, // peers: each behind the contract in sinks/sink
		{"sinks/delta", "sinks/iceberg"},
		{"proto/metrics", "proto/admin"},
		{"proto/notify", "proto/admin"},
		{"internal/ledger", "internal/config"},
		{"cmd/floe/ctl", "cmd/floe/node"},
		{"proto/admin", "cmd/floe/node"},
	} {
		allowed, ok := ruleFor(c.pkg)
		if !ok {
			t.Fatalf("no rule for %s", c.pkg)
		}
		if permits(allowed, c.pkg, c.imp) {
			t.Errorf("the rules let %s import %s", c.pkg, c.imp)
		}
	}
}

// isTestSupport reports whether pkg is itself test support (fakes, helpers):
// it may use the other test support.
func isTestSupport(pkg string) bool {
	for banned := range testOnly {
		if p, ok := strings.CutPrefix(banned, module); ok && strings.HasPrefix(pkg+"/", strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

func ruleFor(pkg string) ([]string, bool) {
	if r, ok := rules[pkg]; ok {
		return r, true
	}
	best, found := "", false
	for k := range rules {
		base, tree := strings.CutSuffix(k, "/...")
		if tree && (pkg == base || strings.HasPrefix(pkg, base+"/")) && len(base) >= len(best) {
			best, found = k, true
		}
	}
	return rules[best], found
}

func permits(allowed []string, pkg, imp string) bool {
	for _, a := range allowed {
		base, tree := strings.CutSuffix(a, "/...")
		if a == "*" || imp == a || (tree && (imp == base || strings.HasPrefix(imp, base+"/"))) {
			return true
		}
	}
	return false
}

// productionImports maps each package directory (relative to the module
// root) to its production files' imports, with the files that make each.
func productionImports(t *testing.T, root string) map[string]map[string][]string {
	t.Helper()
	pkgs := map[string]map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "test") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if pkgs[rel] == nil {
			pkgs[rel] = map[string][]string{}
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			pkgs[rel][imp] = append(pkgs[rel][imp], filepath.Base(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
