package spectest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// spec is a copy of the Iceberg REST Catalog OpenAPI spec that Floe's
// endpoint follows (shared/specs/iceberg-rest-catalog-open-api.yaml).
//
//go:embed iceberg-rest-catalog-open-api.yaml
var spec []byte

// Checker validates responses against the Iceberg REST OpenAPI spec:
// the operation must exist, the status must be one it declares, and the
// JSON body must match the declared schema (JSON Schema 2020-12, which
// OpenAPI 3.1 uses).
type Checker struct {
	spec     map[string]any
	compiler *jsonschema.Compiler
	paths    []specRoute
}

type specRoute struct {
	re   *regexp.Regexp
	item map[string]any
}

const specURL = "file:///iceberg-rest-catalog-open-api.json"

// New parses the spec; it fails t if the spec does not compile.
func New(t testing.TB) *Checker {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	spec := stringKeys(doc).(map[string]any)
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(specURL, inst); err != nil {
		t.Fatal(err)
	}
	sc := &Checker{spec: spec, compiler: c}
	for p, item := range spec["paths"].(map[string]any) {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`) + "$")
		sc.paths = append(sc.paths, specRoute{re: re, item: item.(map[string]any)})
	}
	return sc
}

// stringKeys turns YAML maps (whose keys may be ints, like status codes)
// into JSON-shaped maps.
func stringKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = stringKeys(e)
		}
		return x
	case map[any]any:
		out := map[string]any{}
		for k, e := range x {
			out[fmt.Sprint(k)] = stringKeys(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = stringKeys(e)
		}
	}
	return v
}

// Check validates one response to a request on path (escaped, without
// the mount prefix).
func (sc *Checker) Check(method, path string, status int, body []byte) error {
	if method == http.MethodHead {
		body = nil // HEAD responses have no body on the wire
	}
	if strings.HasPrefix(path, "/v1/") && !strings.HasPrefix(path, "/v1/config") && !strings.HasPrefix(path, "/v1/oauth/") && !strings.Contains(path, "/floe/") {
		path = "/v1/floe/" + strings.TrimPrefix(path, "/v1/") // served without a prefix too
	}
	var item map[string]any
	for _, p := range sc.paths {
		if p.re.MatchString(path) {
			item = p.item
		}
	}
	if item == nil {
		return fmt.Errorf("no spec path matches %s", path)
	}
	op, ok := item[strings.ToLower(method)].(map[string]any)
	if !ok {
		return fmt.Errorf("spec has no %s on %s", method, path)
	}
	responses := op["responses"].(map[string]any)
	code := strconv.Itoa(status)
	resp, ok := responses[code]
	if !ok {
		resp, ok = responses[code[:1]+"XX"]
	}
	if !ok {
		return fmt.Errorf("status %d is not declared for %s %s", status, method, path)
	}
	r := sc.resolve(resp.(map[string]any))
	content, _ := r["content"].(map[string]any)
	if content == nil || method == http.MethodHead {
		if len(bytes.TrimSpace(body)) > 0 && method != http.MethodHead {
			return fmt.Errorf("status %d of %s %s declares no body, got %s", status, method, path, body)
		}
		return nil
	}
	mt, ok := content["application/json"].(map[string]any)
	if !ok {
		return fmt.Errorf("status %d of %s %s has no application/json content", status, method, path)
	}
	ref := sc.schemaRef(mt["schema"].(map[string]any))
	sch, err := sc.compiler.Compile(ref)
	if err != nil {
		return fmt.Errorf("compiling %s: %w", ref, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w: %s", err, body)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s %s %d does not match %s: %v", method, path, status, ref, err)
	}
	return nil
}

// resolve follows a $ref to components/responses.
func (sc *Checker) resolve(m map[string]any) map[string]any {
	for {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = sc.spec
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		m = cur.(map[string]any)
	}
}

// schemaRef returns a compilable reference to a response's schema.
func (sc *Checker) schemaRef(schema map[string]any) string {
	if ref, ok := schema["$ref"].(string); ok {
		return specURL + ref
	}
	panic(fmt.Sprintf("inline response schema %v", schema))
}

// Transport returns a RoundTripper that checks every response it carries
// against the spec (mount is the path prefix in front of /v1, such as
// /iceberg) and reports violations to t. Requests must not be concurrent
// with the end of the test.
func (sc *Checker) Transport(t testing.TB, base http.RoundTripper, mount string) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &checkingTransport{t: t, sc: sc, base: base, mount: mount}
}

type checkingTransport struct {
	t     testing.TB
	sc    *Checker
	base  http.RoundTripper
	mount string

	mu      sync.Mutex
	checked int
}

func (c *checkingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	path := strings.TrimPrefix(r.URL.EscapedPath(), c.mount)
	if cerr := c.sc.Check(r.Method, path, resp.StatusCode, body); cerr != nil {
		c.t.Errorf("spec conformance: %v", cerr)
	}
	c.mu.Lock()
	c.checked++
	c.mu.Unlock()
	return resp, nil
}
