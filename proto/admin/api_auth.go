package admin

import (
	"context"
	"errors"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/floe-io/floe/proto/auth"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// Authorization of the admin API. Every RPC, whether it arrives over gRPC
// or through the HTTP gateway (which reaches the services through the same
// interceptor, see inprocConn), is checked against methodScopes; a method
// missing from the table is refused, so a new RPC cannot go out
// unprotected (TestMethodScopesCoverEveryRPC also fails).

// scopeNone marks a method that needs no token.
const scopeNone auth.Scope = ""

// methodScopes is the scope each RPC needs: read for reads, admin for
// writes, none for the health check (probes carry no token).
var methodScopes = map[string]auth.Scope{
	adminv1.ClusterService_ListMembers_FullMethodName:        auth.ScopeRead,
	adminv1.ClusterService_GetLeader_FullMethodName:          auth.ScopeRead,
	adminv1.ClusterService_TransferLeadership_FullMethodName: auth.ScopeAdmin,
	adminv1.ClusterService_DrainNode_FullMethodName:          auth.ScopeAdmin,
	adminv1.ClusterService_UndrainNode_FullMethodName:        auth.ScopeAdmin,
	adminv1.ClusterService_RemoveNode_FullMethodName:         auth.ScopeAdmin,

	adminv1.TableService_ListMappings_FullMethodName:   auth.ScopeRead,
	adminv1.TableService_GetMapping_FullMethodName:     auth.ScopeRead,
	adminv1.TableService_CreateMapping_FullMethodName:  auth.ScopeAdmin,
	adminv1.TableService_UpdateMapping_FullMethodName:  auth.ScopeAdmin,
	adminv1.TableService_DeleteMapping_FullMethodName:  auth.ScopeAdmin,
	adminv1.TableService_ListTables_FullMethodName:     auth.ScopeRead,
	adminv1.TableService_GetTable_FullMethodName:       auth.ScopeRead,
	adminv1.TableService_PauseTable_FullMethodName:     auth.ScopeAdmin,
	adminv1.TableService_ResumeTable_FullMethodName:    auth.ScopeAdmin,
	adminv1.TableService_RewindTable_FullMethodName:    auth.ScopeAdmin,
	adminv1.TableService_ListSnapshots_FullMethodName:  auth.ScopeRead,
	adminv1.TableService_RunMaintenance_FullMethodName: auth.ScopeAdmin,

	adminv1.HealthService_Check_FullMethodName: scopeNone,
}

// errUnlisted refuses a method that is not in methodScopes.
var errUnlisted = errors.New("method has no scope in the admin API's table")

// authorize checks a call's token for method. ctx carries the incoming
// metadata (gRPC, or the gateway's copy of the HTTP request headers).
func (s *Server) authorize(ctx context.Context, method string) error {
	need, ok := methodScopes[method]
	if !ok {
		s.refused(method, remoteOf(ctx), errUnlisted)
		return status.Error(codes.PermissionDenied, errUnlisted.Error())
	}
	if need == scopeNone {
		return nil
	}
	var h string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("authorization"); len(v) > 0 {
			h = v[0]
		}
	}
	if err := s.tokens.CheckHeader(h, need); err != nil {
		s.refused(method, remoteOf(ctx), err)
		if errors.Is(err, auth.ErrScope) {
			return status.Error(codes.PermissionDenied, err.Error())
		}
		return status.Error(codes.Unauthenticated, err.Error())
	}
	return nil
}

// unaryAuth is the gRPC interceptor that authorizes every call.
func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.authorize(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return handler(s.withCaller(ctx), req) // caller.go
}

// refused logs a refusal: what, from where and why. Never the token.
func (s *Server) refused(what, remote string, err error) {
	s.log.Warn("admin request refused", "method", what, "remote", remote, "reason", err.Error())
}

// remoteOf is the caller's address: the gRPC peer, or for calls through
// the gateway the X-Forwarded-For it derives from the HTTP request.
func remoteOf(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("x-forwarded-for"); len(v) > 0 {
			return v[len(v)-1]
		}
	}
	return ""
}

// require wraps a plain HTTP route (the status report, the legacy POST
// routes) with a token check, logging refusals like the RPCs'.
func (s *Server) require(need auth.Scope, h http.HandlerFunc) http.Handler {
	return s.tokens.Require(need, func(w http.ResponseWriter, r *http.Request, code int, err error) {
		s.refused(r.Method+" "+r.URL.Path, r.RemoteAddr, err)
		http.Error(w, err.Error(), code)
	}, h)
}
