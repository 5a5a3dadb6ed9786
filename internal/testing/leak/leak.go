// Package leak is the goroutine-leak check of the packages whose tests talk
// HTTP (a catalog, a REST mirror, iceberg-go's IO): goleak, except the
// keep-alive connections net/http's pool may hold briefly after a test has
// closed every client and server it made.
package leak

import (
	"testing"

	"go.uber.org/goleak"
)

// VerifyTestMain runs the package's tests and fails if a goroutine other
// than an idle keep-alive connection outlives them.
func VerifyTestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}
