package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/floe-io/floe/cmd/floe/ctl"
	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/logbuf"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// secretMarker is the value planted in one secret field; it names the
// field so that a leak says which.
func secretMarker(field string) string {
	return "MARKER_" + strings.NewReplacer(".", "_", "[", "_", "]", "_").Replace(field) + "_7f3a9c"
}

// TestNoSecretInAnyOutput plants a marker in every secret field, inline
// in one run and from *_file files in the other, starts a node that uses
// them (Kafka through SASL/PLAIN with the planted password) and fails
// where it can (an unreachable schema registry, REST catalogs and
// webhook), then searches every output for the markers: the log at debug
// level, GET /v1/status, floe status as text and JSON, the configuration
// printed with %v, %+v and slog, and the configuration errors.
func TestNoSecretInAnyOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	for _, tc := range []struct {
		name           string
		files          bool
		registryBearer bool // the registry's bearer token, else basic auth
	}{
		{"inline, registry basic auth", false, false},
		{"files, registry bearer token", true, true},
		{"inline, registry bearer token", false, true},
		{"files, registry basic auth", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) { checkNoSecretLeaks(t, tc.files, tc.registryBearer) })
	}
}

func checkNoSecretLeaks(t *testing.T, files, registryBearer bool) {
	dir := t.TempDir()
	saslPass := secretMarker("kafka.sasl.password")
	adminTok := secretMarker("auth.tokens")
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "plain", "avro"),
		kfake.EnableSASL(), kfake.Superuser("PLAIN", "floe", saslPass))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.SASL(plain.Auth{User: "floe", Pass: saslPass}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	env := secretEnv(t, dir, kc.ListenAddrs(), files, registryBearer, saslPass, adminTok)
	cfg, err := config.Load("", env)
	if err != nil {
		t.Fatal(err)
	}
	markers := []string{adminTok}
	for _, f := range config.SecretFields(&cfg) {
		if f == "schema_registry.password" && registryBearer || f == "schema_registry.bearer_token" && !registryBearer ||
			f == "catalogs.rest[0].client_secret" || f == "catalogs.rest[1].token" {
			continue // the other form of one credential
		}
		markers = append(markers, secretMarker(f))
	}
	var outputs = map[string]string{}
	// A configuration error about a secret names fields and paths only.
	_, both := config.Load("", append(env, "FLOE_KAFKA_SASL_PASSWORD="+saslPass, "FLOE_KAFKA_SASL_PASSWORD_FILE="+filepath.Join(dir, "kafka.sasl.password")))
	outputs["configuration error"] = fmt.Sprint(both)

	logs := &logbuf.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log.Info("configuration", "config", cfg)
	outputs["config %v"] = fmt.Sprintf("%v", cfg)
	outputs["config %+v"] = fmt.Sprintf("%+v", &cfg)
	n, err := testnode.Start(context.Background(), cfg, log, testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	testnode.Produce(t, prod, "plain", []string{`{"a":1}`, `{"a":2}`, `{"a":3}`}, 1)
	testnode.Produce(t, prod, "avro", []string{string(registrytest.Frame(1, nil, []byte{2, 'x'}))}, 1)
	waitFailingPaths(t, n)
	nodeOutputs(t, n.AdminAddr(), adminTok, outputs)
	outputs["log"] = logs.String()
	for what, out := range outputs {
		for _, m := range markers {
			if strings.Contains(out, m) {
				i := strings.Index(out, m)
				t.Errorf("%s shows secret %s: ...%s...", what, m, out[max(0, i-200):min(len(out), i+len(m)+50)])
			}
		}
	}
	if !strings.Contains(outputs["/v1/status"], "sec.avro") || !strings.Contains(outputs["log"], "level") {
		t.Fatalf("outputs are empty: status %d bytes, log %d bytes", len(outputs["/v1/status"]), len(outputs["log"]))
	}
}

// secretEnv is the environment of a node with a marker in every secret,
// inline or in files under dir; the registry, the REST catalogs and the
// webhook point at addresses nothing listens on.
func secretEnv(t *testing.T, dir string, brokers []string, files, registryBearer bool, saslPass, adminTok string) []string {
	closed := func() string { // an address nothing listens on
		a, err := embedded.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	base := testnode.Config(t, dir, brokers, []config.Table{{Topic: "plain", Namespace: "sec"}})
	env := []string{
		"FLOE_NODE_ID=" + base.Node.ID, "FLOE_NODE_DATA_DIR=" + base.Node.DataDir,
		"FLOE_NODE_RAFT_ADDR=" + base.Node.RaftAddr, "FLOE_NODE_ADMIN_ADDR=" + base.Node.AdminAddr, "FLOE_NODE_RPC_ADDR=" + base.Node.RPCAddr,
		"FLOE_KAFKA_BOOTSTRAP_SERVERS=" + strings.Join(brokers, ","), "FLOE_KAFKA_SASL_MECHANISM=PLAIN", "FLOE_KAFKA_SASL_USERNAME=floe",
		"FLOE_WAREHOUSE_LOCATION=" + base.Warehouse.Location, "FLOE_COMMIT_INTERVAL=500ms",
		`FLOE_TABLES=[{"topic": "plain", "namespace": "sec", "start_offset": "earliest"}, {"topic": "avro", "namespace": "sec", "format": "avro", "error_mode": "log", "start_offset": "earliest"}]`,
		"FLOE_SCHEMA_REGISTRY_URL=http://" + closed(), "FLOE_SCHEMA_REGISTRY_TIMEOUT=1s",
		"FLOE_CATALOGS_SYNC_INTERVAL=100ms", "FLOE_NOTIFICATIONS_INTERVAL=100ms",
	}
	if !registryBearer {
		env = append(env, "FLOE_SCHEMA_REGISTRY_USERNAME=floe")
	}
	// set plants one secret, inline or through a file.
	set := func(envName, field, value string) {
		if !files {
			env = append(env, envName+"="+value)
			return
		}
		p := filepath.Join(dir, field)
		if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, envName+"_FILE="+p)
	}
	set("FLOE_KAFKA_SASL_PASSWORD", "kafka.sasl.password", saslPass)
	for _, f := range []string{"access_key_id", "secret_access_key", "session_token"} {
		set("FLOE_WAREHOUSE_S3_"+strings.ToUpper(f), "warehouse.s3."+f, secretMarker("warehouse.s3."+f))
	}
	if registryBearer {
		set("FLOE_SCHEMA_REGISTRY_BEARER_TOKEN", "schema_registry.bearer_token", secretMarker("schema_registry.bearer_token"))
	} else {
		set("FLOE_SCHEMA_REGISTRY_PASSWORD", "schema_registry.password", secretMarker("schema_registry.password"))
	}
	set("FLOE_NOTIFICATIONS_WEBHOOK_URL", "notifications.webhook_url", "http://"+closed()+"/hooks/"+secretMarker("notifications.webhook_url"))
	rest := []map[string]string{{"name": "tok", "uri": "http://" + closed()}, {"name": "oauth", "uri": "http://" + closed(), "client_id": "floe"}}
	for i, kv := range []struct{ key, field string }{{"token", "catalogs.rest[0].token"}, {"client_secret", "catalogs.rest[1].client_secret"}} {
		if files {
			p := filepath.Join(dir, kv.field)
			if err := os.WriteFile(p, []byte(secretMarker(kv.field)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			rest[i][kv.key+"_file"] = p
		} else {
			rest[i][kv.key] = secretMarker(kv.field)
		}
	}
	restJSON, _ := json.Marshal(rest)
	env = append(env, "FLOE_CATALOGS_REST="+string(restJSON))
	if files {
		p := filepath.Join(dir, "tokens")
		if err := os.WriteFile(p, []byte(adminTok+" admin\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "FLOE_AUTH_TOKENS_FILE="+p)
	} else {
		env = append(env, "FLOE_AUTH_TOKENS="+adminTok+":admin")
	}

	return env
}

// nodeOutputs adds what a node serves about itself: GET /v1/status and
// floe status as text and as JSON.
func nodeOutputs(t *testing.T, addr, adminTok string, outputs map[string]string) {
	outputs["/v1/status"] = getStatus(t, addr, adminTok)
	for _, args := range [][]string{{}, {"--json"}} {
		cmd := ctl.StatusCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"--addr", addr, "--token", adminTok, "--timeout", "5s"}, args...))
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("floe status %v: %v: %s", args, err, out.String())
		}
		outputs["floe status "+strings.Join(args, " ")] = out.String()
	}
}

// waitFailingPaths waits until rows came in through SASL and the paths
// that fail have failed: the registry (sec.avro's reason) and both REST
// catalogs (their sync errors on sec.plain).
func waitFailingPaths(t *testing.T, n *node.Node) {
	wait.Until(t, 60*time.Second, "rows through SASL, a failing registry and failing catalogs", func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			return err
		}
		byName := map[string]status.TableReport{}
		for _, tr := range rep.Tables {
			byName[tr.Table] = tr
		}
		p, a := byName["sec.plain"], byName["sec.avro"]
		if p.Rows < 3 {
			return fmt.Errorf("sec.plain has %d rows", p.Rows)
		}
		if a.Reason == "" {
			return fmt.Errorf("sec.avro shows no registry error: %+v", a)
		}
		failed := 0
		for _, c := range p.Catalogs {
			if c.LastError != "" {
				failed++
			}
		}
		if failed < 2 {
			return fmt.Errorf("catalog syncs: %+v", p.Catalogs)
		}
		return nil
	})

}

func getStatus(t *testing.T, addr, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/status", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/v1/status: %s: %s", resp.Status, b)
	}
	return string(b)
}
