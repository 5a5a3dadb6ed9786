package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/floe-io/floe/cluster/tlsconf"
	"github.com/floe-io/floe/internal/config"
)

// tlsSecrets maps each internal TLS variable to the template parameter
// (CloudFormation) and variable (Terraform) holding its secret's ARN.
var tlsSecrets = []struct{ env, param, tfVar string }{
	{"FLOE_CLUSTER_TLS_CA_PEM", "ClusterTlsCaSecretArn", "cluster_tls_ca_secret_arn"},
	{"FLOE_CLUSTER_TLS_CERT_PEM", "ClusterTlsCertSecretArn", "cluster_tls_cert_secret_arn"},
	{"FLOE_CLUSTER_TLS_KEY_PEM", "ClusterTlsKeySecretArn", "cluster_tls_key_secret_arn"},
}

// child returns the value of key in a mapping node, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = child(n, k)
	}
	return n
}

// TestCloudFormationInjectsInternalTLS: the ECS task gets its internal TLS
// from three Secrets Manager secrets (required parameters), injected into
// FLOE_CLUSTER_TLS_*_PEM; the execution role may read each of them
// unconditionally; nothing sets cluster.insecure_internal.
func TestCloudFormationInjectsInternalTLS(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "deploy", "cloudformation", "floe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "INSECURE_INTERNAL") {
		t.Error("floe.yaml still mentions FLOE_CLUSTER_INSECURE_INTERNAL")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	top := doc.Content[0]
	floe := path(top, "Resources", "TaskDefinition", "Properties", "ContainerDefinitions").Content[0]
	injected := map[string]*yaml.Node{}
	for _, s := range child(floe, "Secrets").Content {
		if s.Kind == yaml.MappingNode { // not inside an !If: always injected
			injected[child(s, "Name").Value] = child(s, "ValueFrom")
		}
	}
	var readable []string
	for _, p := range child(path(top, "Resources", "ExecutionRole", "Properties"), "Policies").Content {
		sts := path(p, "PolicyDocument", "Statement")
		if sts == nil {
			continue // a policy under !If: not always there
		}
		for _, st := range sts.Content {
			if a := child(st, "Action"); a != nil && a.Value == "secretsmanager:GetSecretValue" && child(st, "Resource") != nil {
				for _, r := range child(st, "Resource").Content {
					if r.Tag == "!Ref" {
						readable = append(readable, r.Value)
					}
				}
			}
		}
	}
	for _, s := range tlsSecrets {
		if v := injected[s.env]; v == nil || v.Tag != "!Ref" || v.Value != s.param {
			t.Errorf("Secrets must always inject %s from !Ref %s, got %v", s.env, s.param, v)
		}
		p := path(top, "Parameters", s.param)
		if p == nil || child(p, "Default") != nil || child(p, "AllowedPattern") == nil ||
			!strings.Contains(child(p, "AllowedPattern").Value, "secretsmanager") {
			t.Errorf("parameter %s must be required and match a Secrets Manager ARN", s.param)
		}
		if !slices.Contains(readable, s.param) {
			t.Errorf("the execution role cannot read %s (GetSecretValue on !Ref %s outside any !If); it reads %v", s.env, s.param, readable)
		}
	}
}

// TestTerraformInjectsInternalTLS: the same for the Terraform module.
func TestTerraformInjectsInternalTLS(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(root, "deploy", "terraform", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	main, vars := read("main.tf"), read("variables.tf")
	if strings.Contains(main, "INSECURE_INTERNAL") {
		t.Error("main.tf still mentions FLOE_CLUSTER_INSECURE_INTERNAL")
	}
	for _, s := range tlsSecrets {
		inject := regexp.MustCompile(`\{\s*name\s*=\s*"` + s.env + `",\s*valueFrom\s*=\s*var\.` + s.tfVar + `\s*\}`)
		if !inject.MatchString(main) {
			t.Errorf("main.tf does not inject %s from var.%s", s.env, s.tfVar)
		}
		decl := regexp.MustCompile(`(?s)variable "` + s.tfVar + `" \{(.*?)\n\}`).FindStringSubmatch(vars)
		if decl == nil || strings.Contains(decl[1], "default") {
			t.Errorf("variables.tf must declare %s without a default (required)", s.tfVar)
		}
	}
	// The execution role's GetSecretValue covers local.secret_arns, which
	// must hold the three unconditionally.
	if !regexp.MustCompile(`tls_secret_arns\s*=\s*\[var\.cluster_tls_ca_secret_arn, var\.cluster_tls_cert_secret_arn, var\.cluster_tls_key_secret_arn\]`).MatchString(main) ||
		!regexp.MustCompile(`secret_arns\s*=\s*concat\(local\.tls_secret_arns,`).MatchString(main) ||
		!regexp.MustCompile(`statement \{\s*actions\s*=\s*\["secretsmanager:GetSecretValue"\]\s*resources\s*=\s*local\.secret_arns`).MatchString(main) {
		t.Error("the execution role must always be allowed GetSecretValue on the three internal TLS secrets")
	}
}

// TestInjectedTLSSecretsStartANode: the set the README makes (floe tls ca
// create, floe tls cert create with the default server name), passed as
// the variables the templates inject, with the templates' 0.0.0.0
// listeners, is a configuration that loads and internal TLS that a node
// accepts.
func TestInjectedTLSSecretsStartANode(t *testing.T) {
	ca, err := tlsconf.NewCA("Floe cluster CA", 0)
	if err != nil {
		t.Fatal(err)
	}
	node, err := tlsconf.NewCert(ca, tlsconf.CertRequest{NodeID: "ecs"})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"FLOE_NODE_RAFT_ADDR=0.0.0.0:7420", "FLOE_NODE_RPC_ADDR=0.0.0.0:7422", "FLOE_NODE_ADVERTISE_ADDR=10.0.0.1:7420",
		"FLOE_KAFKA_BOOTSTRAP_SERVERS=b-1:9096", "FLOE_WAREHOUSE_LOCATION=file://" + t.TempDir(),
		`FLOE_TABLES=[{"topic": "orders", "namespace": "sales"}]`,
		tlsSecrets[0].env + "=" + string(ca.Cert), tlsSecrets[1].env + "=" + string(node.Cert), tlsSecrets[2].env + "=" + string(node.Key),
	}
	cfg, err := config.Load("", env)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Cluster.TLS
	if _, err := tlsconf.Load(tlsconf.Files{
		CAPEM: []byte(c.CAPEM), CertPEM: []byte(c.CertPEM), KeyPEM: []byte(c.KeyPEM), ServerName: c.ServerName, VerifyIncoming: c.VerifyIncoming,
	}, nil); err != nil {
		t.Fatal(err)
	}
}
