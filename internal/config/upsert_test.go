package config

import (
	"strings"
	"testing"
)

// TestUpsertSettingsValidated: mode and key are checked in YAML (through
// FLOE_TABLES, which decodes as the tables section does) and each error
// names its field.
func TestUpsertSettingsValidated(t *testing.T) {
	cases := []struct {
		name  string
		table string
		field string // "" means accepted
		msg   string
	}{
		{"append by default", `{"topic": "a"}`, "", ""},
		{"upsert by the Kafka key", `{"topic": "a", "mode": "upsert"}`, "", ""},
		{"upsert by fields", `{"topic": "a", "mode": "upsert", "key": ["id", "region"]}`, "", ""},
		{"append named", `{"topic": "a", "mode": "append"}`, "", ""},
		{"unknown mode", `{"topic": "a", "mode": "merge"}`, "tables[0].mode", "use append or upsert"},
		{"key without upsert", `{"topic": "a", "key": ["id"]}`, "tables[0].key", "is for mode upsert"},
		{"nested key field", `{"topic": "a", "mode": "upsert", "key": ["a.b"]}`, "tables[0].key[0]", "top-level payload field"},
		{"metadata key field", `{"topic": "a", "mode": "upsert", "key": ["_kafka_key"]}`, "tables[0].key[0]", "metadata column"},
		{"key field twice", `{"topic": "a", "mode": "upsert", "key": ["id", "id"]}`, "tables[0].key[1]", "listed twice"},
		{"empty key field", `{"topic": "a", "mode": "upsert", "key": [""]}`, "tables[0].key[0]", ""},
		{"raw with key fields", `{"topic": "a", "format": "raw", "mode": "upsert", "key": ["id"]}`, "tables[0].key", "raw table"},
		{"partitioned upsert", `{"topic": "a", "mode": "upsert", "partition_by": [{"column": "x", "transform": "day"}]}`, "", ""},
		{"upsert with a Delta log (deletion vectors)", `{"topic": "a", "mode": "upsert", "formats": ["iceberg", "delta"]}`, "", ""},
		{"upsert published as Delta only (deletion vectors)", `{"topic": "a", "mode": "upsert", "formats": ["delta"]}`, "", ""},
		{"too many key fields", `{"topic": "a", "mode": "upsert", "key": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}`, "tables[0].key", "more than 16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Load(write(t, validYAML), []string{"FLOE_TABLES=[" + c.table + "]"})
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if m := cfg.Tables[0].Mode; m != "" && m != ModeAppend && m != ModeUpsert {
					t.Fatalf("mode %q", m)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.field+":") || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v does not name %s with %q", err, c.field, c.msg)
			}
		})
	}
}
