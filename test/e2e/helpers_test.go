package e2e

// The end-to-end tests build their nodes with internal/testing/testnode
// (the one test-node builder) and their fleets of floe processes from the
// binary built here.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestMain removes the floe binary the fleet tests built, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtBinary != "" {
		os.RemoveAll(filepath.Dir(builtBinary))
	}
	os.Exit(code)
}

var buildOnce sync.Once
var builtBinary string
var buildErr error

// floeBinary builds the real floe binary (cmd/floe) once per test run, for
// the tests that run fleets of floe processes.
func floeBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "floe-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBinary = filepath.Join(dir, "floe")
		cmd := exec.Command("go", "build", "-o", builtBinary, "github.com/floe-io/floe/cmd/floe")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBinary
}
