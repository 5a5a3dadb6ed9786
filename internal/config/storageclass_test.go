package config

import (
	"strings"
	"testing"
)

// TestStorageClass: a mapping's storage_class is empty or an S3 storage
// class spelt as S3 spells it; a wrong one is refused naming the field, the
// table and the classes allowed, in the file's mappings and the API's.
func TestStorageClass(t *testing.T) {
	cfg := Defaults()
	cases := []struct {
		name, class string
		want        []string // empty: accepted
	}{
		{"empty is the bucket's default", "", nil},
		{"intelligent tiering", "INTELLIGENT_TIERING", nil},
		{"reduced redundancy (MinIO)", "REDUCED_REDUNDANCY", nil},
		{"glacier instant retrieval", "GLACIER_IR", nil},
		{"express one zone", "EXPRESS_ONEZONE", nil},
		{"lower case", "standard_ia", []string{"mapping.storage_class: ", `"standard_ia"`, "sales.orders", "STANDARD_IA", "upper case"}},
		{"unknown", "COLD", []string{"mapping.storage_class: ", "not an S3 storage class", "INTELLIGENT_TIERING", "bucket's default"}},
		{"outposts is not a bucket class", "OUTPOSTS", []string{"not an S3 storage class"}},
		{"glacier cannot be read", "GLACIER", []string{"mapping.storage_class: ", "cannot be read until restored", "sales.orders"}},
		{"deep archive cannot be read", "DEEP_ARCHIVE", []string{"cannot be read until restored"}},
		{"long value", strings.Repeat("S", 5000), []string{"mapping.storage_class: ", "longer than 64"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := Table{Topic: "orders", Namespace: "sales", Name: "orders", StorageClass: c.class}
			err := cfg.ValidateMapping(&m, "mapping")
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("storage_class %.40q accepted", c.class)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %.300v does not say %q", err, w)
				}
			}
			if len(err.Error()) > 1024 {
				t.Fatalf("error of %d bytes repeats the input", len(err.Error()))
			}
		})
	}
}

// TestStorageClassInFile: the configuration file's key, and its error
// names the table's position.
func TestStorageClassInFile(t *testing.T) {
	for _, c := range []struct {
		yaml, want string
	}{
		{"storage_class: INTELLIGENT_TIERING", ""},
		{"storage_class: FAST", "tables[0].storage_class: \"FAST\" for table default.clicks"},
	} {
		t.Run(c.yaml, func(t *testing.T) {
			doc := "kafka: {bootstrap_servers: [\"k:9092\"]}\nwarehouse: {location: \"file:///tmp/w\"}\ntables:\n  - topic: clicks\n    name: clicks\n    " + c.yaml + "\n"
			cfg, err := Load(write(t, doc), nil)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "" && cfg.Tables[0].StorageClass != "INTELLIGENT_TIERING":
				t.Fatalf("storage_class %q", cfg.Tables[0].StorageClass)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v does not say %q", err, c.want)
			}
		})
	}
}
