package localfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLiteralLocations: a file:// location names the path after file://
// literally, for writing, reading, listing and removing; a file written at
// the decoded path (by iceberg-go's LocalFS, before) is still read through
// its recorded location; and a listing gives each file the location that
// names it, or its plain path when no location could.
func TestLiteralLocations(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ loc, onDisk string }{
		{"file://" + dir + "/region=100%25/f.parquet", dir + "/region=100%25/f.parquet"},
		{"file://localhost" + dir + "/region=a%2Fb/f.parquet", dir + "/region=a%2Fb/f.parquet"},
		{"file:" + dir + "/region=s%C3%A3o+paulo/f.parquet", dir + "/region=s%C3%A3o+paulo/f.parquet"},
	}
	var fsys FS
	for _, c := range cases {
		if err := fsys.WriteFile(c.loc, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(c.onDisk); err != nil {
			t.Fatalf("%s: not at %s: %v", c.loc, c.onDisk, err)
		}
		b, err := fsys.ReadFile(c.loc)
		if err != nil || string(b) != "x" {
			t.Fatalf("reading %s: %q %v", c.loc, b, err)
		}
	}
	if _, err := fsys.Open("file://elsewhere/x"); err == nil {
		t.Fatal("a remote authority was opened")
	}

	// Written before, at the decoded path: read there, never removed there.
	legacy := "file://" + dir + "/old/region=100%25/g.parquet"
	if err := os.MkdirAll(dir+"/old/region=100%", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/old/region=100%/g.parquet", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open(legacy)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "old" {
		t.Fatalf("legacy file read %q", b)
	}
	if err := fsys.Remove(legacy); err == nil {
		t.Fatal("removing the literal path removed the legacy file")
	}

	var listed []string
	if err := fsys.WalkDir("file://"+dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			listed = append(listed, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{cases[0].loc, "file://" + dir + "/region=a%2Fb/f.parquet", "file://" + dir + "/region=s%C3%A3o+paulo/f.parquet",
		filepath.Join(dir, "old/region=100%/g.parquet")}
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Fatalf("listed %q\nwant %q", listed, want)
	}
	for _, c := range cases {
		if err := fsys.Remove(c.loc); err != nil {
			t.Fatal(err)
		}
	}
}
