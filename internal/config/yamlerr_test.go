package config

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestYAMLErrorsNameTheFix: a value of the wrong shape in the file is
// refused naming its line, its field, the shape the field takes and what
// was found (yaml.v3 alone says "cannot unmarshal !!str `127.0.0...` into
// []string"), and how to write it where that is plain; every bad field of
// the file is reported at once.
func TestYAMLErrorsNameTheFix(t *testing.T) {
	const wh = "warehouse: {location: file:///tmp/wh}\n"
	for _, c := range []struct {
		name string
		yaml string
		want []string
		not  []string // must not appear (raw yaml.v3 words, secrets)
	}{
		{"string for a list", wh + "kafka:\n  bootstrap_servers: 127.0.0.1:9092\n",
			[]string{`line 3: kafka.bootstrap_servers: expected a list of strings`, `found the string "127.0.0.1:9092"`, "write it as a list: [127.0.0.1:9092]"},
			[]string{"!!str", "[]string", "cannot unmarshal"}},
		{"comma-separated string for a list", wh + "cluster: {join: 'a:7422,b:7422'}\n",
			[]string{"line 2: cluster.join: expected a list of strings", "write it as a list: [a:7422, b:7422]"}, nil},
		{"list for a string", wh + "node:\n  id: [a, b]\n",
			[]string{"line 3: node.id: expected a string, found a list"}, nil},
		{"word for a bool", wh + "kafka: {tls: {enabled: maybe}}\n",
			[]string{"kafka.tls.enabled: expected true or false", `found the string "maybe"`, "write true or false"}, nil},
		{"bool shorthand for a mapping", wh + "kafka:\n  tls: true\n",
			[]string{"line 3: kafka.tls: expected a mapping (enabled, ca_file, cert_file", "found a boolean", "write {enabled: true}"}, nil},
		{"scalar for a mapping", wh + "kafka:\n  sasl: PLAIN\n",
			[]string{"line 3: kafka.sasl: expected a mapping (mechanism, username", "put its fields on the lines below it"}, []string{"PLAIN"}},
		{"text for a number", wh + "max_columns: lots\n",
			[]string{"line 2: max_columns: expected a whole number", `found the string "lots"`}, nil},
		{"bad duration", wh + "commit_interval: soon\n",
			[]string{`line 2: commit_interval: "soon" is not a duration like 10s or 1m30s`}, nil},
		{"list for a duration", wh + "commit_interval: [1s]\n",
			[]string{"line 2: commit_interval: expected a duration like 10s or 1m30s, found a list"}, nil},
		{"bad size", wh + "memory_budget: huge\n",
			[]string{`line 2: memory_budget: "huge" is not a size like 128MiB`}, nil},
		{"in a table", wh + "tables:\n  - topic: a\n  - topic: b\n    partition_by: day\n",
			[]string{"line 5: tables[1].partition_by: expected a list, each item a mapping (column, transform)", `found the string "day"`}, nil},
		{"a table not a list", wh + "tables: {topic: a}\n",
			[]string{"line 2: tables: expected a list, each item a mapping (topic, topic_regex", `start each item with "- "`}, nil},
		{"in a namespace", wh + "namespaces:\n  sales: {location: [a]}\n",
			[]string{"line 3: namespaces.sales.location: expected a string, found a list"}, nil},
		{"unknown field", wh + "kafka:\n  bootstrap_server: [a:9092]\n",
			[]string{"line 3: kafka.bootstrap_server: no such field; did you mean bootstrap_servers?", "(the fields here: bootstrap_servers, client_id, tls, sasl)"},
			[]string{"not found in type"}},
		{"secret not quoted", wh + "kafka:\n  sasl: hunter2-secret\n",
			[]string{"line 3: kafka.sasl: expected a mapping", "found a string"}, []string{"hunter2"}},
		{"secret leaf not quoted", wh + "schema_registry: {password: {x: 1}}\nkafka: {sasl: {password: [hunter2-secret]}}\n",
			[]string{"schema_registry.password: expected a string, found a mapping", "kafka.sasl.password: expected a string, found a list"}, []string{"hunter2"}},
		{"every problem at once", wh + "commit_interval: soon\nmax_columns: lots\nkafka: {bootstrap_servers: x:1}\n",
			[]string{"line 2: commit_interval", "line 3: max_columns", "line 4: kafka.bootstrap_servers"}, nil},
		{"syntax error", wh + "kafka: [\n", []string{"floe.yaml: line"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(t, c.yaml), nil)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			for _, w := range c.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error says %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestYAMLErrorsFromEnv: a YAML or JSON value of a FLOE_ variable of the
// wrong shape names the field inside it.
func TestYAMLErrorsFromEnv(t *testing.T) {
	_, err := Load(write(t, validYAML), []string{`FLOE_TABLES=[{"topic": ["a"]}]`})
	if err == nil || !strings.Contains(err.Error(), "tables (from FLOE_TABLES)") || !strings.Contains(err.Error(), "tables[0].topic: expected a string, found a list") {
		t.Fatalf("error: %v", err)
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		t.Fatalf("the explained error does not wrap yaml.v3's: %v", err)
	}
}

// TestWarehouseLocationRequired: a configuration without
// warehouse.location is refused naming the field and what to write (it
// used to mean ./warehouse of whatever directory the process started in);
// FLOE_WAREHOUSE_LOCATION sets it as well as the file.
func TestWarehouseLocationRequired(t *testing.T) {
	noWarehouse := "kafka: {bootstrap_servers: [127.0.0.1:9092]}\ntables: [{topic: orders}]\n"
	for _, c := range []struct {
		name string
		path string
		env  []string
		want string // "": accepted
	}{
		{"file without it", write(t, noWarehouse), nil, "config: warehouse.location: not set: say where the tables go, e.g. s3://"},
		{"no file, no variable", "", nil, "FLOE_WAREHOUSE_LOCATION"},
		{"empty in the file", write(t, noWarehouse+"warehouse: {location: ''}\n"), nil, "warehouse.location: not set"},
		{"from the environment", write(t, noWarehouse), []string{"FLOE_WAREHOUSE_LOCATION=file:///tmp/wh"}, ""},
		{"from the file", write(t, noWarehouse+"warehouse: {location: s3://b/p}\n"), nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Load(c.path, c.env)
			if c.want == "" {
				if err != nil || cfg.Warehouse.Location == "" {
					t.Fatalf("Load: %v, location %q", err, cfg.Warehouse.Location)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want an error saying %q", err, c.want)
			}
		})
	}
}
