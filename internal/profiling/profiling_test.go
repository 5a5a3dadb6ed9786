package profiling

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStartCPUProfile(t *testing.T) {
	cases := []struct {
		name    string
		path    func(dir string) string
		wantErr bool
	}{
		{"writes a gzipped profile", func(dir string) string { return filepath.Join(dir, "cpu.prof") }, false},
		{"refuses a path in a missing directory", func(dir string) string { return filepath.Join(dir, "missing", "cpu.prof") }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path(t.TempDir())
			stop, err := StartCPU(path)
			if (err != nil) != c.wantErr {
				t.Fatalf("StartCPU(%s): err %v, want error %v", path, err, c.wantErr)
			}
			if err != nil {
				return
			}
			stop()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// pprof writes a gzip-compressed protobuf: a profile that was
			// never stopped is empty.
			if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				t.Fatalf("profile %s is %d bytes, not gzip", path, len(b))
			}
		})
	}
}
