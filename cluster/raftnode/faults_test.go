package raftnode

import (
	"context"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// faults breaks one node's internal RPC for the multi-node tests, through
// the node's interceptors (NodeConfig.RPCServerInterceptor and
// RPCClientInterceptor), so production code carries no test switch.
type faults struct {
	// cutOff makes the internal RPC fail both ways; a test sets it to
	// partition a node together with its Raft transport.
	cutOff atomic.Bool
	// dropAnswers makes the next forwarded applies succeed but lose their
	// answer, as when the leader dies mid-call.
	dropAnswers atomic.Int32
	// raftAhead makes the Info answers this node receives say that Raft's
	// applied index is 0, as if this node's Raft had handed every entry to
	// its FSM already: only the FSM's own index then says what to wait for.
	raftAhead atomic.Bool
}

func (f *faults) server(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if f.cutOff.Load() {
		return nil, status.Error(codes.Unavailable, "node cut off")
	}
	resp, err := handler(ctx, req)
	if !strings.HasSuffix(info.FullMethod, "/Apply") || err != nil {
		return resp, err
	}
	// A follower's answer "not the leader" was never applied: only applied
	// commands lose their answer.
	if r, ok := resp.(*ApplyResponse); ok && r.Err != nil && r.Err.Code == "not_leader" {
		return resp, err
	}
	if f.dropAnswers.Load() > 0 && f.dropAnswers.Add(-1) >= 0 {
		return nil, status.Error(codes.Unavailable, "answer dropped (test)")
	}
	return resp, err
}

func (f *faults) client(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if f.cutOff.Load() {
		return status.Error(codes.Unavailable, "node cut off")
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if info, ok := reply.(*InfoResponse); ok && err == nil && f.raftAhead.Load() {
		info.Applied = 0
	}
	return err
}
