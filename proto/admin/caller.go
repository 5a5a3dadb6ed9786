package admin

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/floe-io/floe/proto/auth"
)

// Who made an admin call, recorded with the changes it asks for (PauseTable
// and RewindTable carry it): the client certificate's subject when the
// admin port runs mutual TLS, else the bearer token's fingerprint, else
// "anonymous" (authentication off). Context values cannot come from the
// wire, so a caller cannot claim another's name.

type callerKey struct{}

// httpCertKey carries the subject of the HTTP gateway request's client
// certificate into the in-process gRPC call (inprocConn has no peer).
type httpCertKey struct{}

// Caller returns who made the admin call ctx belongs to ("" outside one).
func Caller(ctx context.Context) string {
	v, _ := ctx.Value(callerKey{}).(string)
	return v
}

// WithCaller returns ctx naming who calls, for a backend called in process
// (tests); the API sets it itself.
func WithCaller(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, callerKey{}, who)
}

// withCaller records the caller of an authorized call.
func (s *Server) withCaller(ctx context.Context) context.Context {
	return WithCaller(ctx, s.callerOf(ctx))
}

func (s *Server) callerOf(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			if sub := certSubject(&ti.State); sub != "" {
				return sub
			}
		}
	}
	if sub, ok := ctx.Value(httpCertKey{}).(string); ok && sub != "" {
		return sub
	}
	if s.tokens.Enabled() {
		if md, ok := metadata.FromIncomingContext(ctx); ok {
			if v := md.Get("authorization"); len(v) > 0 {
				if _, tok, ok := strings.Cut(v[0], " "); ok {
					return auth.Fingerprint(tok)
				}
			}
		}
	}
	return "anonymous"
}

func certSubject(cs *tls.ConnectionState) string {
	if cs == nil || len(cs.PeerCertificates) == 0 || len(cs.VerifiedChains) == 0 {
		return "" // only a certificate the server verified names anyone
	}
	return "cert:" + cs.PeerCertificates[0].Subject.String()
}

// withHTTPCert passes a gateway request's verified client certificate on.
func withHTTPCert(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sub := certSubject(r.TLS); sub != "" {
			r = r.WithContext(context.WithValue(r.Context(), httpCertKey{}, sub))
		}
		next.ServeHTTP(w, r)
	})
}
