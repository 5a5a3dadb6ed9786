package config

import (
	"reflect"
	"testing"
)

func TestUnknownEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		want []UnknownEnvVar
	}{
		{"misspelt", []string{"FLOE_COMIT_INTERVAL=5s"}, []UnknownEnvVar{{"FLOE_COMIT_INTERVAL", "FLOE_COMMIT_INTERVAL"}}},
		{"singular for plural", []string{"FLOE_KAFKA_BOOTSTRAP_SERVER=x:9092"}, []UnknownEnvVar{{"FLOE_KAFKA_BOOTSTRAP_SERVER", "FLOE_KAFKA_BOOTSTRAP_SERVERS"}}},
		{"missing part", []string{"FLOE_KAFKA_BOOTSTRAP=x:9092"}, []UnknownEnvVar{{"FLOE_KAFKA_BOOTSTRAP", "FLOE_KAFKA_BOOTSTRAP_SERVERS"}}},
		{"under a section, nothing close", []string{"FLOE_KAFKA_SOMETHING_ELSE_ENTIRELY=1"}, []UnknownEnvVar{{"FLOE_KAFKA_SOMETHING_ELSE_ENTIRELY", ""}}},
		{"valid", []string{"FLOE_COMMIT_INTERVAL=5s", "FLOE_KAFKA_BOOTSTRAP_SERVERS=x:9092"}, nil},
		{"CLI variables", []string{"FLOE_TOKEN=abc", "FLOE_ADDR=127.0.0.1:7421"}, nil},
		{"not Floe's", []string{"PATH=/bin", "FLOE_INTEROP_WORK=/tmp/x", "HOME=/root"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := UnknownEnv(c.env); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("UnknownEnv(%v) = %v, want %v", c.env, got, c.want)
			}
		})
	}
}

// TestEnvWarnings: each unknown variable is one sentence naming it and,
// when one is close, the variable it likely meant.
func TestEnvWarnings(t *testing.T) {
	got := EnvWarnings([]string{"FLOE_KAFKA_BOOTSTRAP_SERVER=x:9092", "FLOE_KAFKA_SOMETHING_ELSE_ENTIRELY=1", "FLOE_COMMIT_INTERVAL=5s"})
	want := []string{
		"environment variable FLOE_KAFKA_BOOTSTRAP_SERVER sets nothing: it is not a Floe setting; did you mean FLOE_KAFKA_BOOTSTRAP_SERVERS?",
		"environment variable FLOE_KAFKA_SOMETHING_ELSE_ENTIRELY sets nothing: it is not a Floe setting (docs/configuration.md lists them)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("EnvWarnings = %q, want %q", got, want)
	}
}

// TestByteSizeErrors: a bad size names the value as written, and a negative
// one says so (memory_budget: -1GiB used to read `"-1" is not a size`).
func TestByteSizeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"-1GiB", `"-1GiB": a size cannot be negative`},
		{"lots", `"lots" is not a size like 128MiB`},
		{"12XiB", `"12XiB" is not a size like 128MiB`},
	} {
		if _, err := ParseByteSize(c.in); err == nil || err.Error() != c.want {
			t.Errorf("ParseByteSize(%q) = %v, want %s", c.in, err, c.want)
		}
	}
	if n, err := ParseByteSize("1.5KiB"); err != nil || n != 1536 {
		t.Errorf("ParseByteSize(1.5KiB) = %d, %v", n, err)
	}
}
