package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// EnvVar describes one environment override, for documentation.
type EnvVar struct {
	Name  string // FLOE_KAFKA_BOOTSTRAP_SERVERS
	Field string // kafka.bootstrap_servers
}

// EnvVars lists every supported environment override.
func EnvVars() []EnvVar {
	var out []EnvVar
	walkFields(reflect.TypeOf(Config{}), "", func(path string, _ []int, _ reflect.Type) {
		out = append(out, EnvVar{Name: envName(path), Field: path})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func envName(path string) string {
	return "FLOE_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// walkFields calls fn for every leaf field (anything but a nested struct)
// with its dotted YAML path and index path.
func walkFields(t reflect.Type, prefix string, fn func(path string, index []int, typ reflect.Type)) {
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			path := tag
			if prefix != "" {
				path = prefix + "." + tag
			}
			idx := append(append([]int{}, index...), i)
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, path, idx)
				continue
			}
			fn(path, idx, f.Type)
		}
	}
	walk(t, prefix, nil)
}

var (
	durationType = reflect.TypeOf(Duration(0))
	sizeType     = reflect.TypeOf(ByteSize(0))
)

func applyEnv(cfg *Config, env []string) error {
	vals := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "FLOE_") {
			vals[k] = v
		}
	}
	if len(vals) == 0 {
		return nil
	}
	root := reflect.ValueOf(cfg).Elem()
	var err error
	walkFields(root.Type(), "", func(path string, index []int, typ reflect.Type) {
		if err != nil {
			return
		}
		raw, ok := vals[envName(path)]
		if !ok {
			return
		}
		if e := setField(root.FieldByIndex(index), typ, raw, path); e != nil {
			err = fmt.Errorf("config: %s (from %s): %w", path, envName(path), e)
		}
	})
	return err
}

// setField sets the field at path, of type typ, from an environment
// variable's value.
func setField(v reflect.Value, typ reflect.Type, raw, path string) error {
	switch {
	case typ == durationType:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("%q is not a duration like 10s", raw)
		}
		v.SetInt(int64(d))
	case typ == sizeType:
		b, err := ParseByteSize(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(b))
	case typ.Kind() == reflect.String:
		v.SetString(raw)
	case typ.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("%q is not true or false", raw)
		}
		v.SetBool(b)
	case typ.Kind() == reflect.Int || typ.Kind() == reflect.Int64 || typ.Kind() == reflect.Int32:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", raw)
		}
		v.SetInt(n)
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.String:
		var parts []string
		for _, p := range strings.Split(raw, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		v.Set(reflect.ValueOf(parts))
	case typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map:
		ptr := reflect.New(typ)
		if err := yaml.Unmarshal([]byte(raw), ptr.Interface()); err != nil {
			return fmt.Errorf("not YAML or JSON of the field's shape: %w", yamlValueError(raw, err, typ, path))
		}
		v.Set(ptr.Elem())
	default:
		return fmt.Errorf("unsupported field type %s", typ)
	}
	return nil
}
