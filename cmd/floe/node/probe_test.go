package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/config"
)

// TestProbeWarehouse: a warehouse Floe can write passes and is left as it
// was; one it cannot write (here a path under a regular file, which fails
// for root too) is an error naming warehouse.location.
func TestProbeWarehouse(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "wh")
	for _, c := range []struct {
		name, loc string
		wantErr   bool
	}{
		{"writable", "file://" + ok, false},
		{"under a file", "file://" + file + "/wh", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := probeWarehouse(context.Background(), config.Warehouse{Location: c.loc}, "n1")
			if c.wantErr != (err != nil) || (err != nil && !strings.Contains(err.Error(), "warehouse.location "+c.loc)) {
				t.Fatalf("probe %s: %v (want error: %v)", c.loc, err, c.wantErr)
			}
		})
	}
	left, _ := filepath.Glob(filepath.Join(ok, "_floe", "probe", "*"))
	if len(left) != 0 {
		t.Fatalf("the probe left %v behind", left)
	}
}
