package main

import (
	"os"
	"os/exec"
	"testing"
)

// runAsFloe, set in a child's environment, makes the test binary run as the
// floe command (see floeCommand).
const runAsFloe = "FLOE_TEST_RUN_AS_FLOE"

func TestMain(m *testing.M) {
	if os.Getenv(runAsFloe) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// floeCommand runs this test binary as the floe command with args: the same
// code as the binary, without the minutes a separate build costs, for tests
// of the command line itself.
func floeCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsFloe+"=1")
	return cmd
}
