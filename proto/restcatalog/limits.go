package restcatalog

import (
	"fmt"
	"net/http"
)

// MaxBodyBytes caps a request body on the catalog's own listener. The
// endpoint is read-only: the only bodies it accepts are scan reports (POST
// .../metrics, a few kilobytes, dropped) and the spec's write requests it
// refuses, so nothing needs more; 4 MiB is also the admin port's cap,
// which applies when the catalog is served there.
const MaxBodyBytes = 4 << 20

// MaxHeaderBytes caps a request's header block on the catalog's own
// listener (Go's default is 1 MiB).
const MaxHeaderBytes = 64 << 10

// limitBody answers 413 naming the limit to a request that declares a body
// over MaxBodyBytes, before authentication or routing read anything, and
// bounds any other body to the limit: a handler that reads it gets an
// error past it instead of holding it.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			// The body is not drained: the connection closes after the answer.
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestEntityTooLarge, "BadRequestException",
				fmt.Sprintf("request body of %d bytes is larger than the catalog's limit of %d bytes", r.ContentLength, MaxBodyBytes))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}
