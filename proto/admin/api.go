package admin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/floe-io/floe/proto/auth"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// Options configures ListenAPI.
type Options struct {
	// Log receives refusals and failures; nil: slog.Default().
	Log *slog.Logger
	// Tokens are the accepted bearer tokens; nil or empty: no
	// authentication.
	Tokens *auth.Tokens
	// TLS, when set, serves TLS (HTTP/2 and HTTP/1.1 by ALPN); with
	// ClientCAs and ClientAuth RequireAndVerifyClientCert it is mutual TLS.
	// nil: plaintext, where gRPC clients speak HTTP/2 without TLS (h2c).
	TLS *tls.Config
	// Metrics, when set, is served at GET /metrics (unauthenticated).
	Metrics http.Handler
	// MaxBodyBytes caps an HTTP request body and a gRPC message; 0:
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// ListenAPI binds addr and returns a server ready to Serve with the whole
// admin API on the one port: gRPC (HTTP/2 requests of content type
// application/grpc), its HTTP/JSON form through grpc-gateway under /v1/,
// /openapi.json, /metrics and the plain routes of Listen.
func ListenAPI(addr string, b Backend, opts Options) (*Server, error) {
	if b == nil {
		return nil, errors.New("admin API needs a backend")
	}
	return listen(addr, b, b, opts)
}

// listen builds the server; b nil serves only the Source routes.
func listen(addr string, src Source, b Backend, opts Options) (*Server, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	mux := http.NewServeMux()
	s := &Server{src: src, log: opts.Log, mux: mux, tokens: opts.Tokens, maxBody: opts.MaxBodyBytes}
	s.routeSource(mux)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(adminv1.OpenAPI)
	})
	if opts.Metrics != nil {
		mux.Handle("GET /metrics", opts.Metrics)
	}
	if b != nil {
		gw, err := s.serveAPI(b)
		if err != nil {
			return nil, err
		}
		// Routes above are more specific and win; the rest of /v1/ is
		// the gateway's, which answers 404 for what it does not know.
		mux.Handle("/v1/", s.limitBody(opts.MaxBodyBytes, withHTTPCert(gw)))
		if err := s.routeConsole(mux, b); err != nil { // console.go
			s.grpc.Stop()
			return nil, err
		}
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if s.grpc != nil {
			s.grpc.Stop()
		}
		return nil, fmt.Errorf("listening for admin on %s: %w", addr, err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetHTTP2(true)
	protos.SetUnencryptedHTTP2(true) // h2c with prior knowledge: gRPC without TLS
	s.srv = &http.Server{Handler: http.HandlerFunc(s.dispatch), ReadHeaderTimeout: 10 * time.Second, Protocols: &protos,
		// Failed handshakes and the like go to the node's log, not stderr.
		ErrorLog: slog.NewLogLogger(opts.Log.Handler(), slog.LevelWarn)}
	if opts.TLS != nil {
		cfg := opts.TLS.Clone()
		cfg.NextProtos = []string{"h2", "http/1.1"}
		if cfg.MinVersion == 0 {
			cfg.MinVersion = tls.VersionTLS12
		}
		s.srv.TLSConfig = cfg
		ln = tls.NewListener(ln, cfg)
	}
	s.ln = ln
	return s, nil
}

// dispatch sends gRPC calls to the gRPC server and everything else to the
// HTTP routes.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if s.grpc != nil && r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		s.grpc.ServeHTTP(w, r) // capped by MaxRecvMsgSize
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		// Every route, including those mounted later (the REST catalog),
		// reads at most the cap; limitBody answers 413 on the API's.
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	}
	s.mux.ServeHTTP(w, r)
}

// serveAPI registers the services with a gRPC server (authorized by
// unaryAuth) and returns the HTTP gateway to them.
//
// The gateway reaches the services through inprocConn, which calls the
// same implementations in process (no loopback dial) through the same
// interceptor. Registering the implementations directly
// (RegisterXHandlerServer) would bypass interceptors and need a second,
// HTTP-side authorization keyed by route, which could drift from
// methodScopes.
func (s *Server) serveAPI(b Backend) (http.Handler, error) {
	// gRPC reads a message before the interceptor sees the call, so the
	// cap on what an unauthenticated caller makes the node hold is the
	// receive size.
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.unaryAuth), grpc.MaxRecvMsgSize(int(s.maxBody)))
	conn := &inprocConn{methods: map[string]inprocMethod{}, interceptor: s.unaryAuth}
	for _, svc := range []struct {
		desc *grpc.ServiceDesc
		impl any
	}{
		{&adminv1.ClusterService_ServiceDesc, &clusterAPI{b: b}},
		{&adminv1.TableService_ServiceDesc, &tableAPI{b: b}},
		{&adminv1.HealthService_ServiceDesc, &healthAPI{src: b}},
	} {
		s.grpc.RegisterService(svc.desc, svc.impl)
		conn.add(svc.desc, svc.impl)
	}

	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		}),
		runtime.WithErrorHandler(gatewayError),
		runtime.WithRoutingErrorHandler(gatewayRoutingError),
	)
	ctx := context.Background()
	if err := adminv1.RegisterClusterServiceHandlerClient(ctx, gw, adminv1.NewClusterServiceClient(conn)); err != nil {
		return nil, err
	}
	if err := adminv1.RegisterTableServiceHandlerClient(ctx, gw, adminv1.NewTableServiceClient(conn)); err != nil {
		return nil, err
	}
	if err := adminv1.RegisterHealthServiceHandlerClient(ctx, gw, adminv1.NewHealthServiceClient(conn)); err != nil {
		return nil, err
	}
	return gw, nil
}

// gatewayError is the gateway's default error answer with a proper
// WWW-Authenticate header on a 401 (the default puts the status message
// there, which is not a challenge).
func gatewayError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if status.Code(err) == codes.Unauthenticated {
		w = challengeWriter{w}
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}

// challengeWriter sets the bearer challenge just before the header goes.
type challengeWriter struct{ http.ResponseWriter }

func (c challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
	}
	c.ResponseWriter.WriteHeader(code)
}

// gatewayRoutingError answers requests the gateway has no route for. The
// default maps a known path with the wrong method to Unimplemented, which
// is HTTP 501; a client's mistake must be a 4xx, so that is 405 here.
func gatewayRoutingError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	if code != http.StatusMethodNotAllowed {
		runtime.DefaultRoutingErrorHandler(ctx, mux, m, w, r, code)
		return
	}
	body, err := m.Marshal(status.New(codes.InvalidArgument, "method "+r.Method+" not allowed on "+r.URL.Path).Proto())
	if err != nil {
		http.Error(w, http.StatusText(code), code)
		return
	}
	w.Header().Set("Content-Type", m.ContentType(nil))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// inprocConn is a grpc.ClientConnInterface that calls registered service
// implementations directly, through the server's interceptor, so the
// gateway's calls are authorized exactly like gRPC ones. The gateway's
// outgoing metadata (the HTTP Authorization header, X-Forwarded-For)
// becomes the call's incoming metadata.
type inprocConn struct {
	methods     map[string]inprocMethod
	interceptor grpc.UnaryServerInterceptor
}

type inprocMethod struct {
	impl    any
	handler grpc.MethodHandler
}

func (c *inprocConn) add(desc *grpc.ServiceDesc, impl any) {
	for _, m := range desc.Methods {
		c.methods["/"+desc.ServiceName+"/"+m.MethodName] = inprocMethod{impl: impl, handler: m.Handler}
	}
}

// Invoke implements grpc.ClientConnInterface.
func (c *inprocConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	m, ok := c.methods[method]
	if !ok {
		return status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	in, ok1 := args.(proto.Message)
	outMsg, ok2 := reply.(proto.Message)
	if !ok1 || !ok2 {
		return status.Errorf(codes.Internal, "in-process call of %s with non-proto messages", method)
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	ctx = metadata.NewIncomingContext(ctx, md.Copy())
	dec := func(v any) error {
		pm, ok := v.(proto.Message)
		if !ok {
			return status.Errorf(codes.Internal, "in-process call of %s: request is not a proto message", method)
		}
		proto.Merge(pm, in)
		return nil
	}
	res, err := m.handler(m.impl, ctx, dec, c.interceptor)
	if err != nil {
		return err
	}
	pm, ok := res.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "in-process call of %s: answer is not a proto message", method)
	}
	proto.Reset(outMsg)
	proto.Merge(outMsg, pm)
	return nil
}

// NewStream implements grpc.ClientConnInterface; the admin API has no
// streaming RPCs.
func (c *inprocConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "streaming is not served in process")
}
