package admin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/floe-io/floe/proto/auth"
)

// DefaultMaxBodyBytes caps an HTTP request body and a gRPC message of the
// admin API (4 MiB, gRPC's own default receive size). The largest real
// request, a mapping or a rewind with offsets for every partition, is a few
// kilobytes.
const DefaultMaxBodyBytes = 4 << 20

// limitBody reads a request's body (up to max bytes) before the gateway
// does, after authentication: an unauthenticated caller is answered 401
// without a byte of its body read, and an authenticated one cannot make
// the node hold more than max. A body over the cap answers 413 naming it.
//
// Which scope a route needs is the interceptor's business (methodScopes);
// here any valid token will do, so that what is read belongs to a known
// caller. Routes that need no token (the health check) are GETs without a
// body and pass through.
func (s *Server) limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Method == http.MethodGet || r.Method == http.MethodHead {
			// No body, or one the gateway does not read (dispatch caps it).
			next.ServeHTTP(w, r)
			return
		}
		if err := s.tokens.Check(r, auth.ScopeRead); err != nil {
			s.refused(r.Method+" "+r.URL.Path, r.RemoteAddr, err)
			w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
			// The connection is closed rather than drained: a client that
			// sends 100 MB without a token gets its answer, not a read.
			w.Header().Set("Connection", "close")
			writeStatus(w, auth.Status(err), codes.Unauthenticated, err.Error())
			return
		}
		if r.ContentLength > max {
			w.Header().Set("Connection", "close")
			writeStatus(w, http.StatusRequestEntityTooLarge, codes.ResourceExhausted, tooLarge(r.ContentLength, max))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		if err != nil {
			if mb := (*http.MaxBytesError)(nil); errors.As(err, &mb) {
				writeStatus(w, http.StatusRequestEntityTooLarge, codes.ResourceExhausted, tooLarge(-1, max))
				return
			}
			writeStatus(w, http.StatusBadRequest, codes.InvalidArgument, "reading the request body: "+err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func tooLarge(n, max int64) string {
	if n < 0 {
		return fmt.Sprintf("request body is larger than the admin API's limit of %d bytes", max)
	}
	return fmt.Sprintf("request body of %d bytes is larger than the admin API's limit of %d bytes", n, max)
}

// writeStatus answers in the gateway's JSON error form (a google.rpc.Status:
// code, message), so that clients of /v1/ parse one shape of error.
func writeStatus(w http.ResponseWriter, httpCode int, code codes.Code, msg string) {
	body, err := protojson.Marshal(status.New(code, msg).Proto())
	if err != nil {
		http.Error(w, msg, httpCode)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpCode)
	_, _ = w.Write(body)
}
