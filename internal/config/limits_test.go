package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/names"
)

// TestMappingBounds: every string of a mapping that reaches the replicated
// state is bounded and checked for characters; the error names the field
// and does not repeat an oversized value.
func TestMappingBounds(t *testing.T) {
	cfg := Defaults()
	huge := strings.Repeat("n", 100<<20)
	long := strings.Repeat("t", 300)
	cases := []struct {
		name  string
		m     Table
		field string
		want  string
	}{
		{"300-character table name", Table{Topic: "a", Name: long}, "mapping.name", "longer than 255"},
		{"256-byte namespace", Table{Topic: "a", Namespace: long[:256]}, "mapping.namespace", "longer than 255"},
		{"100 MB namespace", Table{Topic: "a", Namespace: huge}, "mapping.namespace", "longer than 1024"},
		{"100 MB name", Table{Topic: "a", Name: huge}, "mapping.name", "longer than 1024"},
		{"NUL in name", Table{Topic: "a", Name: "or\x00ders"}, "mapping.name", "U+0000"},
		{"NUL in namespace", Table{Topic: "a", Namespace: "a\x00"}, "mapping.namespace", "U+0000"},
		{"slash in name", Table{Topic: "a", Name: "a/b"}, "mapping.name", "'/'"},
		{"template too long after expansion", Table{Topic: "a", Name: "{topic}" + long}, "mapping.name", "longer than 255"},
		{"fixed topic too long after expansion", Table{Topic: strings.Repeat("k", 249), Name: "{topic}_events_v2"}, "mapping.name", "for topic"},
		{"100 MB topic", Table{Topic: huge}, "mapping.topic", "legal Kafka topic"},
		{"NUL in topic", Table{Topic: "a\x00"}, "mapping.topic", "legal Kafka topic"},
		{"100 MB topic_regex", Table{TopicRegex: huge}, "mapping.topic_regex", "longer than 1024"},
		{"100 MB subject", Table{Topic: "a", Format: "json", Subject: huge}, "mapping.subject", "longer than 1024"},
		{"many partition fields", Table{Topic: "a", PartitionBy: make([]PartitionField, 33)}, "mapping.partition_by", "more than 32"},
		{"100 MB format", Table{Topic: "a", Format: huge}, "mapping.format", "longer than 64"},
		{"100 MB error mode", Table{Topic: "a", ErrorMode: huge}, "mapping.error_mode", "longer than 64"},
		{"100 MB dead-letter topic", Table{Topic: "a", DeadLetterTopic: huge}, "mapping.dead_letter_topic", "longer than 1024"},
		{"100 MB window", Table{Topic: "a", Compaction: Compaction{Window: huge}}, "mapping.compaction.window", "longer than 64"},
		{"100 MB transform", Table{Topic: "a", PartitionBy: []PartitionField{{Column: "c", Transform: huge}}}, "mapping.partition_by[0].transform", "longer than 64"},
		{"negative max_nesting_depth", Table{Topic: "a", MaxNestingDepth: -1}, "mapping.max_nesting_depth", "use 1 to 256"},
		{"max_nesting_depth over the cap", Table{Topic: "a", MaxNestingDepth: 257}, "mapping.max_nesting_depth", "use 1 to 256"},
		{"max_columns over the cap", Table{Topic: "a", MaxColumns: 10001}, "mapping.max_columns", "use 1 to 10000"},
		{"100 MB partition column", Table{Topic: "a", PartitionBy: []PartitionField{{Column: huge, Transform: "identity"}}}, "mapping.partition_by[0].column", "longer than 255"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			err := cfg.ValidateMapping(&m, "mapping")
			if err == nil || !strings.Contains(err.Error(), c.field+": ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %.300v does not name %s with %q", err, c.field, c.want)
			}
			if len(err.Error()) > 4096 {
				t.Fatalf("error of %d bytes repeats the input", len(err.Error()))
			}
		})
	}
}

// TestTargetChecksExpansion: a name built from a topic at run time obeys
// the same rule as a configured one, and the error says which part broke it.
func TestTargetChecksExpansion(t *testing.T) {
	topic249 := strings.Repeat("k", 249)
	for _, c := range []struct {
		name, tmplNS, tmplName, topic string
		re                            string
		want                          string
	}{
		{"fits", "raw", "{topic}", topic249, "", ""},
		{"name over 255", "raw", "{topic}_events_v2", topic249, "", "table name: 259 bytes"},
		{"namespace over 255", "{topic}_ns_abcdefg", "t", topic249, "", "table namespace: 260 bytes"},
		{"group over 255", "raw", "{1}{1}", "x." + topic249, `^x\.(.*)$`, "table name: 498 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var re *regexp.Regexp
			if c.re != "" {
				re = regexp.MustCompile(c.re)
			}
			_, _, err := Table{Namespace: c.tmplNS, Name: c.tmplName}.Target(c.topic, re)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, names.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Target = %v, want ErrInvalid with %q", err, c.want)
			}
		})
	}
}

// TestInlineTokenScope: an inline token whose text after the last colon is
// not a scope is a configuration error naming auth.tokens and the scope,
// never a read token with the suffix in its secret; a suffix that is not a
// word (part of a secret) is not repeated.
func TestInlineTokenScope(t *testing.T) {
	for _, c := range []struct {
		tokens string
		want   string // "" for accepted
	}{
		{"LONGENOUGHTOKEN_123456", ""},
		{"LONGENOUGHTOKEN_123456:admin", ""},
		{"LONGENOUGHTOKEN_123456:read,OTHER_TOKEN_0123456789:admin", ""},
		{"with:colon:LONGENOUGHTOKEN_123456:admin", ""},
		{"LONGENOUGHTOKEN_123456:superuser", `item 1: unknown token scope: scope "superuser": use read or admin`},
		{"OTHER_TOKEN_0123456789:admin,LONGENOUGHTOKEN_123456:Admin", `item 2: unknown token scope: scope "Admin"`},
		{"LONGENOUGHTOKEN:123456xyz#", "not a scope"},
		{"short:admin", "shorter than 16"},
	} {
		t.Run(c.tokens, func(t *testing.T) {
			cfg, err := Load(write(t, validYAML), []string{"FLOE_AUTH_TOKENS=" + c.tokens})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Auth.Tokens != c.tokens {
					t.Fatalf("tokens %q", cfg.Auth.Tokens)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load = %v, want an error with %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "auth.tokens") || strings.Contains(err.Error(), "123456xyz") {
				t.Fatalf("error %v does not name auth.tokens or repeats the secret", err)
			}
		})
	}
}

// TestNodeRecordLimits: the node's max_nesting_depth and max_columns
// default to 64 and 1000 and must stay within the caps.
func TestNodeRecordLimits(t *testing.T) {
	if d := Defaults(); d.MaxNestingDepth != 64 || d.MaxColumns != 1000 {
		t.Fatalf("defaults %d, %d", d.MaxNestingDepth, d.MaxColumns)
	}
	cases := []struct {
		name           string
		depth, columns int
		want           string
	}{
		{"zero depth", 0, 1000, "max_nesting_depth: 0: use 1 to 256"},
		{"deep", 1000, 1000, "max_nesting_depth: 1000"},
		{"zero columns", 64, 0, "max_columns: 0: use 1 to 10000"},
		{"wide", 64, 100000, "max_columns: 100000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var msgs []string
			cfg := Defaults()
			cfg.MaxNestingDepth, cfg.MaxColumns = c.depth, c.columns
			cfg.validateLimits(func(field, format string, args ...any) {
				msgs = append(msgs, field+": "+fmt.Sprintf(format, args...))
			})
			if !strings.Contains(strings.Join(msgs, "\n"), c.want) {
				t.Fatalf("%q does not say %q", msgs, c.want)
			}
		})
	}
}
