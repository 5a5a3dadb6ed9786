package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written as "10s" in YAML.
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler. Its errors are
// *yaml.TypeError, so that decoding goes on and reports every bad field of
// the file at once (Load names the field of each).
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if err := scalarOnly(n, "config.Duration"); err != nil {
		return err
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return typeError(n, fmt.Sprintf("%q is not a duration like 10s or 1m30s", n.Value))
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// ByteSize is a size written as 128MiB, 64MB, 1GiB or a plain number of bytes.
type ByteSize int64

// ParseByteSize parses a size with an optional unit.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	orig := s
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size like 128MiB", orig)
	}
	if n < 0 {
		return 0, fmt.Errorf("%q: a size cannot be negative", orig)
	}
	return ByteSize(n * float64(mult)), nil
}

// UnmarshalYAML implements yaml.Unmarshaler, with errors as Duration's.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if err := scalarOnly(n, "config.ByteSize"); err != nil {
		return err
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return typeError(n, err.Error())
	}
	*b = v
	return nil
}

// typeError is a *yaml.TypeError about node n, in yaml.v3's form
// ("line 3: ...").
func typeError(n *yaml.Node, msg string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, msg)}}
}

// scalarOnly refuses a list or mapping where a unit type's scalar belongs,
// in the words yaml.v3 uses for its own types.
func scalarOnly(n *yaml.Node, goType string) error {
	if n.Kind == yaml.ScalarNode {
		return nil
	}
	tag := map[yaml.Kind]string{yaml.SequenceNode: "!!seq", yaml.MappingNode: "!!map"}[n.Kind]
	if tag == "" {
		tag = "!!alias"
	}
	return typeError(n, "cannot unmarshal "+tag+" into "+goType)
}
