package metaloc

import "testing"

func TestVersion(t *testing.T) {
	for _, c := range []struct {
		loc  string
		want int
	}{
		{"s3://b/db/t/metadata/00007-3f2a.metadata.json", 7},
		{"file:///w/db/t/metadata/00012-x.metadata.json.gz", 12},
		{"/00000-a.metadata.json", 0},
		{"s3://b/db/t/metadata/v3.metadata.json", -1},
		{"s3://b/db/t/metadata/00007-3f2a.avro", -1},
		{"", -1},
	} {
		if got := Version(c.loc); got != c.want {
			t.Errorf("Version(%q) = %d, want %d", c.loc, got, c.want)
		}
	}
}

func TestNewerThan(t *testing.T) {
	const dir = "s3://b/db/t/metadata/"
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{dir + "00002-b.metadata.json", dir + "00001-a.metadata.json", true},
		{dir + "00001-a.metadata.json", dir + "00002-b.metadata.json", false},
		{dir + "00002-b.metadata.json", dir + "00002-c.metadata.json", false},
		{"s3://elsewhere/metadata/00009-x.metadata.json", dir + "00002-b.metadata.json", false},
		{"", dir + "00001-a.metadata.json", false},
		{dir + "junk.json", dir + "00001-a.metadata.json", false},
	} {
		if got := NewerThan(c.a, c.b); got != c.want {
			t.Errorf("NewerThan(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// The cases sinks/glue tested its own copy with (glue_test.go TestNewerThan).
func TestNewerThanGlueCases(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"s3://b/t/metadata/00002-a.metadata.json", "s3://b/t/metadata/00001-b.metadata.json", true},
		{"s3://b/t/metadata/00001-a.metadata.json", "s3://b/t/metadata/00002-b.metadata.json", false},
		{"s3://x/t/metadata/00009-a.metadata.json", "s3://b/t/metadata/00002-b.metadata.json", false},
		{"", "s3://b/t/metadata/00002-b.metadata.json", false},
		{"s3://b/t/metadata/v3.metadata.json", "s3://b/t/metadata/00002-b.metadata.json", false},
	} {
		if got := NewerThan(c.a, c.b); got != c.want {
			t.Errorf("NewerThan(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
