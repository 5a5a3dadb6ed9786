package deploy

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/floe-io/floe/internal/config"
)

// The tests run in deploy/; the repository root is its parent.
const root = ".."

// ---------------------------------------------------------------- make release

// releaseCommand is what `make release` runs, with VERSION and COMMIT set to
// recognizable values, split into shell words.
func releaseCommand(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", "-s", "--no-print-directory", "-n", "release", "VERSION=v9.9.9-test", "COMMIT=c0ffee")
	cmd.Dir = root
	// Under `make test` the parent make's flags would reach this make too.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n release: %v\n%s", err, out)
	}
	lines := nonEmptyLines(string(out))
	if len(lines) != 1 {
		t.Fatalf("make release must run exactly one command (the image's build stage runs it), got %d:\n%s", len(lines), out)
	}
	words, err := shellWords(lines[0])
	if err != nil {
		t.Fatalf("make release command %q: %v", lines[0], err)
	}
	return words
}

// releaseOutput checks the release recipe and returns the path (relative to
// the repository) of the binary it writes.
func releaseOutput(t *testing.T) string {
	t.Helper()
	words := releaseCommand(t)
	var env []string
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env = append(env, words[0])
		words = words[1:]
	}
	if !slices.Contains(env, "CGO_ENABLED=0") {
		t.Errorf("make release must build without cgo (CGO_ENABLED=0), env %v", env)
	}
	if len(words) < 2 || words[1] != "build" {
		t.Fatalf("make release must run go build, runs %v", words)
	}
	var ldflags, out string
	for i := 2; i < len(words); i++ {
		switch words[i] {
		case "-ldflags":
			i++
			ldflags = words[i]
		case "-o":
			i++
			out = words[i]
		}
	}
	if !slices.Contains(words, "-trimpath") {
		t.Errorf("make release must build with -trimpath: %v", words)
	}
	for _, want := range []string{"-X main.version=v9.9.9-test", "-X main.commit=c0ffee", "-s", "-w"} {
		if !strings.Contains(" "+ldflags+" ", " "+want+" ") {
			t.Errorf("make release -ldflags %q lacks %q", ldflags, want)
		}
	}
	if words[len(words)-1] != "./cmd/floe" {
		t.Errorf("make release must build ./cmd/floe, builds %q", words[len(words)-1])
	}
	if out == "" {
		t.Fatalf("make release names no output (-o): %v", words)
	}
	return out
}

func TestReleaseBuildsStampedStaticBinary(t *testing.T) {
	if out := releaseOutput(t); out != "bin/floe" {
		t.Errorf("make release writes %s; the Dockerfile and the docs expect bin/floe", out)
	}
}

// -ldflags -X silently ignores a variable that does not exist, so a renamed
// variable would leave `floe version` saying "dev" without any build error.
func TestStampedVariablesExist(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(root, "cmd", "floe", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if file.Name.Name != "main" {
			continue
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					// -X sets only string variables initialized to a constant.
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							found[name.Name] = true
						}
					}
				}
			}
		}
	}
	for _, v := range []string{"version", "commit"} {
		if !found[v] {
			t.Errorf("package main of cmd/floe has no string variable %q for -X main.%s", v, v)
		}
	}
}

// ---------------------------------------------------------------- Dockerfile

type instruction struct {
	stage int    // index of the FROM it belongs to
	cmd   string // upper case: FROM, RUN, COPY, ...
	args  string
	line  int
}

func dockerfile(t *testing.T) []instruction {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "deploy", "docker", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out     []instruction
		stage   = -1
		buf     strings.Builder
		start   int
		lineNum int
	)
	flush := func() {
		s := strings.TrimSpace(buf.String())
		buf.Reset()
		if s == "" {
			return
		}
		cmd, args, _ := strings.Cut(s, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		out = append(out, instruction{stage: stage, cmd: cmd, args: strings.TrimSpace(args), line: start})
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNum++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue // comments, also inside a continued instruction
		}
		if buf.Len() == 0 {
			if trimmed == "" {
				continue
			}
			start = lineNum
		}
		if strings.HasSuffix(trimmed, "\\") {
			buf.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		buf.WriteString(trimmed)
		flush()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	return out
}

// TestImageBuildsWithMakeRelease: the image's binary is the one `make
// release` builds: the build stage runs `make release` with only VERSION and
// COMMIT (from the build arguments of the same names) and the target platform,
// nothing else in the Dockerfile compiles Floe, and the final stage takes the
// file make release writes.
func TestImageBuildsWithMakeRelease(t *testing.T) {
	out := releaseOutput(t)
	ins := dockerfile(t)
	stages := map[string]int{}
	var last int
	for _, in := range ins {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				stages[f[len(f)-1]] = in.stage
			}
			last = in.stage
		}
	}
	build, ok := stages["build"]
	if !ok {
		t.Fatal("Dockerfile has no stage named build")
	}
	var workdir string
	args := map[string]bool{}
	makes := 0
	for _, in := range ins {
		if in.cmd == "RUN" && regexp.MustCompile(`\bgo\s+(build|install)\b`).MatchString(in.args) {
			t.Errorf("line %d: the Dockerfile compiles with go directly (%q); it must only run make release", in.line, in.args)
		}
		if in.stage != build {
			continue
		}
		switch in.cmd {
		case "WORKDIR":
			workdir = in.args
		case "ARG":
			name, _, _ := strings.Cut(in.args, "=")
			args[name] = true
		case "RUN":
			if !strings.Contains(in.args, "make") {
				continue
			}
			makes++
			words, err := shellWords(stripRunFlags(in.args))
			if err != nil {
				t.Fatalf("line %d: %v", in.line, err)
			}
			i := slices.Index(words, "make")
			if i < 0 || i+1 >= len(words) || words[i+1] != "release" {
				t.Fatalf("line %d: the build stage must run `make release`, runs %q", in.line, in.args)
			}
			for _, w := range words[:i] {
				name, _, _ := strings.Cut(w, "=")
				if name != "GOOS" && name != "GOARCH" {
					t.Errorf("line %d: %q before make changes the build beyond the target platform", in.line, w)
				}
			}
			vars := map[string]string{}
			for _, w := range words[i+2:] {
				name, val, ok := strings.Cut(w, "=")
				if !ok {
					t.Errorf("line %d: make release with extra argument %q (not what make release runs alone)", in.line, w)
					continue
				}
				vars[name] = val
			}
			if len(vars) != 2 || vars["VERSION"] != "${VERSION}" || vars["COMMIT"] != "${COMMIT}" {
				t.Errorf("line %d: make release must get exactly VERSION=${VERSION} COMMIT=${COMMIT}, got %v", in.line, vars)
			}
		}
	}
	if makes != 1 {
		t.Errorf("the build stage must run make release exactly once, runs make %d times", makes)
	}
	if !args["VERSION"] || !args["COMMIT"] {
		t.Errorf("the build stage must declare ARG VERSION and ARG COMMIT, declares %v", args)
	}
	if workdir == "" {
		t.Fatal("the build stage has no WORKDIR")
	}
	wantCopy := "--from=build " + filepath.ToSlash(filepath.Join(workdir, out)) + " /floe"
	var copied, entry, user, health, base bool
	for _, in := range ins {
		if in.stage != last {
			continue
		}
		switch in.cmd {
		case "FROM":
			base = strings.HasPrefix(in.args, "gcr.io/distroless/static-debian12:nonroot")
		case "COPY":
			copied = copied || in.args == wantCopy
		case "ENTRYPOINT":
			entry = in.args == `["/floe"]`
		case "USER":
			u, _, _ := strings.Cut(in.args, ":")
			user = u != "" && u != "0" && u != "root"
		case "HEALTHCHECK":
			health = strings.Contains(in.args, `CMD ["/floe", "health"`)
		}
	}
	if !base {
		t.Error("the final stage must be gcr.io/distroless/static-debian12:nonroot")
	}
	if !copied {
		t.Errorf("the final stage must COPY %s (the file make release writes)", wantCopy)
	}
	if !entry {
		t.Error(`the final stage must have ENTRYPOINT ["/floe"]`)
	}
	if !user {
		t.Error("the final stage must run as a non-root USER")
	}
	if !health {
		t.Error("the final stage's HEALTHCHECK must run /floe health (no shell in distroless)")
	}
}

// stripRunFlags drops RUN's own --mount=... flags.
func stripRunFlags(s string) string {
	for strings.HasPrefix(s, "--") {
		_, rest, _ := strings.Cut(s, " ")
		s = strings.TrimSpace(rest)
	}
	return s
}

// ---------------------------------------------------------------- templates and configuration

var floeVar = regexp.MustCompile(`\bFLOE_[A-Z0-9_]+\b`)

func varsIn(t *testing.T, pattern string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", pattern, err)
	}
	out := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range floeVar.FindAllString(string(data), -1) {
			out[v] = true
		}
	}
	return out
}

// Every FLOE_* variable the image and the templates set must be a field of
// the configuration: a misspelt one would be ignored silently.
func TestTemplatesSetOnlyConfigVariables(t *testing.T) {
	known := map[string]bool{}
	for _, v := range config.EnvVars() {
		known[v.Name] = true
	}
	for _, pattern := range []string{"deploy/docker/Dockerfile", "deploy/cloudformation/*.yaml", "deploy/terraform/*.tf"} {
		for v := range varsIn(t, pattern) {
			if !known[v] {
				t.Errorf("%s sets %s, which is not a configuration variable (docs/configuration.md)", pattern, v)
			}
		}
	}
}

func TestCloudFormationAndTerraformSetTheSameVariables(t *testing.T) {
	cfn := sortedKeys(varsIn(t, "deploy/cloudformation/*.yaml"))
	tf := sortedKeys(varsIn(t, "deploy/terraform/*.tf"))
	if !slices.Equal(cfn, tf) {
		t.Errorf("CloudFormation and Terraform set different FLOE_* variables:\ncloudformation: %v\nterraform:      %v", cfn, tf)
	}
}

// TestCloudFormationRollingUpdateSettings checks the settings the rolling
// upgrade relies on (docs/operations.md): replacements before removals, a stop
// timeout equal to the drain timeout (at most ECS's 120 s), a readiness health
// check through the binary, and the join list from Cloud Map.
func TestCloudFormationRollingUpdateSettings(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "deploy", "cloudformation", "floe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	top := doc.Content[0]
	get := func(n *yaml.Node, path ...string) *yaml.Node {
		t.Helper()
		for _, p := range path {
			var next *yaml.Node
			if n != nil && n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == p {
						next = n.Content[i+1]
					}
				}
			}
			if next == nil {
				t.Fatalf("floe.yaml has no %s", strings.Join(path, "."))
			}
			n = next
		}
		return n
	}
	if v := get(top, "Parameters", "DrainTimeoutSeconds", "MaxValue").Value; v != "120" {
		t.Errorf("DrainTimeoutSeconds MaxValue is %s; ECS stopTimeout and cluster.drain_timeout allow at most 120", v)
	}
	dc := get(top, "Resources", "Service", "Properties", "DeploymentConfiguration")
	if v := get(dc, "MinimumHealthyPercent").Value; v != "100" {
		t.Errorf("MinimumHealthyPercent is %s; an old task must stop only after its replacement joined (100)", v)
	}
	containers := get(top, "Resources", "TaskDefinition", "Properties", "ContainerDefinitions")
	floe := containers.Content[0]
	if st := get(floe, "StopTimeout"); st.Tag != "!Ref" || st.Value != "DrainTimeoutSeconds" {
		t.Errorf("StopTimeout is %s %s; it must be !Ref DrainTimeoutSeconds", st.Tag, st.Value)
	}
	env := map[string]*yaml.Node{}
	for _, e := range get(floe, "Environment").Content {
		if e.Kind == yaml.MappingNode {
			env[get(e, "Name").Value] = get(e, "Value")
		}
	}
	if v := env["FLOE_CLUSTER_DRAIN_TIMEOUT"]; v == nil || v.Value != "${DrainTimeoutSeconds}s" {
		t.Errorf("FLOE_CLUSTER_DRAIN_TIMEOUT must be !Sub ${DrainTimeoutSeconds}s")
	}
	if v := env["FLOE_CLUSTER_JOIN"]; v == nil || v.Value != "${DiscoveryServiceName}.${NamespaceName}:7422" {
		t.Errorf("FLOE_CLUSTER_JOIN must be the Cloud Map name at the rpc port")
	}
	var hc []string
	for _, c := range get(floe, "HealthCheck", "Command").Content {
		hc = append(hc, c.Value)
	}
	if want := []string{"CMD", "/floe", "health", "--admin-addr", "127.0.0.1:7421"}; !slices.Equal(hc, want) {
		t.Errorf("health check %v, want %v", hc, want)
	}
	// The command the health check runs must exist.
	main, err := os.ReadFile(filepath.Join(root, "cmd", "floe", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`Use:\s*"health"`).Match(main) {
		t.Error(`cmd/floe has no "health" command; the image's and ECS's health checks run /floe health`)
	}
}

// ---------------------------------------------------------------- helpers

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// shellWords splits a command line like a POSIX shell would, without
// expansions: single quotes keep everything, double quotes keep everything
// but backslash escapes, and a backslash outside quotes escapes one character.
func shellWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote rune
	)
	for i := 0; i < len(s); i++ {
		c := rune(s[i])
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s):
				i++
				cur.WriteByte(s[i])
			default:
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, &unterminated{s}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

type unterminated struct{ s string }

func (e *unterminated) Error() string { return "unterminated quote in " + e.s }

func TestShellWords(t *testing.T) {
	got, err := shellWords(`A=1 go build -ldflags '-s -w -X main.v=1' -o "bin/x y" a\ b`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A=1", "go", "build", "-ldflags", "-s -w -X main.v=1", "-o", "bin/x y", "a b"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
