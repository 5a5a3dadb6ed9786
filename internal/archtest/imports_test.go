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

// rules says, per package (a directory of the module), which of the module's
// packages its production files may import. A key ending in "/..." covers
// the directory and everything below it; the most specific key wins. An
// allowed entry ending in "/..." allows a whole subtree. "*" allows anything.
// Every package of the module must be covered: a new package means a new
// line here and in DESIGN.md.
var rules = map[string][]string{
	// Leaves: the contract types every layer shares.
	"ledger":              nil,
	"config":              {"internal/names"},
	"records":             nil,
	"auth":                {"config"},
	"status":              nil,
	"sinks/sink":          {"records", "ledger", "config"},
	"internal/metaloc":    nil,
	"internal/names":      nil,
	"internal/jsontext":   nil, // JSON scanning shared by the worker's decoder and the sink's appender
	"internal/objstore":   nil, // counts s3:// requests per table (iceberg-go's s3 FileIO, wrapped)
	"internal/procstatus": nil, // /proc/self/status figures: the tests' RSS, floe serve's memory limit
	"internal/localfs":    nil, // file:// FileIO taking locations literally (partition paths)

	// The replicated state: fsm is pure; raftnode runs it; catalog and
	// recovery do the I/O on top of it through small interfaces.
	"cluster/fsm":          {"ledger", "config"},
	"cluster/raftnode":     {"cluster/fsm", "cluster/tlsconf", "ledger", "config"},
	"cluster/tlsconf":      nil, // internal ports' mTLS and floe tls
	"cluster/catalog":      {"cluster/fsm", "ledger", "internal/metaloc", "internal/names"},
	"cluster/recovery":     {"cluster/fsm", "cluster/catalog", "ledger", "config"},
	"cluster/internal/...": {"*"}, // test support (clustertest)

	// Placement: pure plan and the leader-only controller.
	"assignment": {"ledger"},

	// The record's path: never Raft, never the cluster packages.
	"worker/...": {"worker/...", "records", "ledger", "config", "sinks/sink", "status", "internal/jsontext"},

	// Providers behind the worker's interfaces.
	"schemas":         {"records"},
	"schemas/...":     {"records", "schemas"},
	"sinks/iceberg":   {"sinks/sink", "sinks/delta", "records", "ledger", "internal/metaloc", "internal/jsontext", "internal/localfs"},
	"sinks/delta":     {"ledger"}, // the Delta log; never Raft, never the worker
	"sinks/glue/...":  {"sinks/sink", "internal/metaloc"},
	"sinks/restsync":  {"sinks/sink", "internal/metaloc", "auth"},
	"restcatalog/...": {"auth", "restcatalog"},

	// Edges: the admin API, its clients, metrics and notifications.
	"admin":     {"auth", "config", "status", "proto/..."},
	"ctl":       {"proto/..."},
	"metrics":   {"status"},
	"notify":    {"status"},
	"proto/...": {"proto/..."},

	// Composition: the node builder and the binary.
	"node":    {"*"},
	"cmd/...": {"*"},
	"deploy":  nil,

	// The real-broker benchmark's baseline: a user's own loop, no Floe.
	"bench/...": nil,

	// Test support: only tests import it (checked below).
	"internal/testing/...":    {"*"},
	"internal/testing/logbuf": nil, // a leaf: the tests of raftnode and cmd/floe share it
	"internal/archtest":       nil,
}

// testOnly are imports no production file may make, except in the packages
// named: fakes and fault injection live in tests; floe demo and the benches
// reach kfake and the fake registry through cmd/floe alone.
var testOnly = map[string][]string{
	module + "internal/testing/":         nil,
	module + "cluster/internal/":         nil,
	module + "schemas/registrytest":      {"cmd/floe"},
	module + "sinks/glue/gluetest":       nil,
	module + "restcatalog/spectest":      nil,
	"github.com/twmb/franz-go/pkg/kfake": {"cmd/floe"},
	"github.com/hashicorp/raft":          {"cluster/raftnode", "cluster/recovery", "cluster/catalog", "cluster/internal/clustertest", "node", "cmd/floe"},
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
		{"records", "worker"},
		{"schemas", "worker"},
		{"sinks/iceberg", "worker"},
		{"sinks/delta", "worker/commit"},
		{"sinks/delta", "cluster/fsm"},
		{"metrics", "admin"},
		{"notify", "admin"},
		{"ledger", "config"},
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
