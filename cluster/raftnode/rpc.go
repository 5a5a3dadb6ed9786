package raftnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// The internal RPC is gRPC with a JSON codec and a hand-written service
// description: the messages are few and small, JSON keeps them readable and
// forward compatible across versions during a rolling upgrade (unknown fields
// are ignored), and no generated code has to be kept in step with Raft
// commands, which are already encoded bytes.

const rpcService = "floe.internal.v1.Internal"

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return "json" }

func init() { encoding.RegisterCodec(jsonCodec{}) }

// ApplyRequest carries one encoded command to the leader.
type ApplyRequest struct {
	Command []byte `json:"command"`
}

// ApplyResponse is the leader's answer: the log index and, when the FSM
// refused the command, the refusal as a wire error.
type ApplyResponse struct {
	Index uint64     `json:"index"`
	Err   *wireError `json:"err,omitempty"`
}

// InfoRequest asks a node about itself.
type InfoRequest struct{}

// InfoResponse is what a node says about itself: enough for a joining node
// to decide whether to bootstrap or join, and for the leader to judge health
// and place work.
type InfoResponse struct {
	ID        string `json:"id"`
	RaftAddr  string `json:"raft_addr"`
	RPCAddr   string `json:"rpc_addr"`
	Version   string `json:"version"`
	Zone      string `json:"zone,omitempty"`
	HasState  bool   `json:"has_state"` // part of a Raft configuration
	LeaderID  string `json:"leader_id,omitempty"`
	Applied   uint64 `json:"applied"`
	LastIndex uint64 `json:"last_index"`
	// FSMApplied is the index of the last command the node's FSM applied.
	// Applied is Raft's: it counts entries once they are handed to the FSM,
	// before the FSM has applied them. 0 from a node older than the field.
	FSMApplied uint64 `json:"fsm_applied,omitempty"`
	// Load is the measured fetch throughput per partition ("topic/N" ->
	// bytes per second) of this node.
	Load map[string]float64 `json:"load,omitempty"`
	// Halted: the node's FSM stopped at an entry its build does not know
	// (upgrade required); the leader places no work on it. An older leader
	// ignores the field.
	Halted bool `json:"halted,omitempty"`
	// StorageFailing: the node cannot write its Raft log (a full disk,
	// storewatch.go); the leader places no work on it until it can, so
	// its tables move to nodes that apply the log. An older leader ignores
	// the field.
	StorageFailing bool `json:"storage_failing,omitempty"`
	// Now is the node's wall clock (unix ms) as it answered, for the
	// leader's clock-skew check (clockskew.go); 0 from an older node.
	Now int64 `json:"now,omitempty"`
}

// JoinRequest asks the leader to add a node to the Raft configuration.
type JoinRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
}

// LeaveRequest asks the leader to remove a node from the configuration and
// the membership.
type LeaveRequest struct {
	ID string `json:"id"`
}

// Empty is an empty response.
type Empty struct{}

// rpcHandler is what the server calls; internalService implements it.
type rpcHandler interface {
	rpcApply(ctx context.Context, in *ApplyRequest) (*ApplyResponse, error)
	rpcInfo(ctx context.Context, in *InfoRequest) (*InfoResponse, error)
	rpcJoin(ctx context.Context, in *JoinRequest) (*Empty, error)
	rpcLeave(ctx context.Context, in *LeaveRequest) (*Empty, error)
	rpcTransfer(ctx context.Context, in *TransferRequest) (*Empty, error)
	rpcBarrier(ctx context.Context, in *BarrierRequest) (*BarrierResponse, error)
	rpcState(ctx context.Context, in *StateRequest) (*StateResponse, error)
}

// TransferRequest asks the leader to hand leadership to voter ID (any
// up-to-date voter when empty).
type TransferRequest struct {
	ID string `json:"id,omitempty"`
}

func unary[In, Out any](name string, call func(rpcHandler, context.Context, *In) (*Out, error)) grpc.MethodDesc {
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv any, ctx context.Context, dec func(any) error, icp grpc.UnaryServerInterceptor) (any, error) {
			in := new(In)
			if err := dec(in); err != nil {
				return nil, err
			}
			h := srv.(rpcHandler)
			if icp == nil {
				return call(h, ctx, in)
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + rpcService + "/" + name}
			return icp(ctx, in, info, func(ctx context.Context, req any) (any, error) { return call(h, ctx, req.(*In)) })
		},
	}
}

var rpcDesc = grpc.ServiceDesc{
	ServiceName: rpcService,
	HandlerType: (*rpcHandler)(nil),
	Methods: []grpc.MethodDesc{
		unary("Apply", rpcHandler.rpcApply),
		unary("Info", rpcHandler.rpcInfo),
		unary("Join", rpcHandler.rpcJoin),
		unary("Leave", rpcHandler.rpcLeave),
		unary("Transfer", rpcHandler.rpcTransfer),
		unary("Barrier", rpcHandler.rpcBarrier),
		unary("State", rpcHandler.rpcState),
	},
	Metadata: "floe/internal/v1 (json codec)",
}

// rpcServer serves the internal RPC on its own listener.
type rpcServer struct {
	srv *grpc.Server
	lis net.Listener
}

func listenRPC(addr string, h rpcHandler, icp grpc.UnaryServerInterceptor, creds credentials.TransportCredentials) (*rpcServer, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for internal rpc on %s: %w", addr, err)
	}
	opts := []grpc.ServerOption{grpc.Creds(creds)}
	if icp != nil {
		opts = append(opts, grpc.UnaryInterceptor(icp))
	}
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&rpcDesc, h)
	go func() { _ = srv.Serve(lis) }()
	return &rpcServer{srv: srv, lis: lis}, nil
}

func (s *rpcServer) Addr() string { return s.lis.Addr().String() }

// Stop stops serving; in-flight calls get a second to finish.
func (s *rpcServer) Stop() {
	done := make(chan struct{})
	go func() { s.srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		s.srv.Stop()
	}
}

// rpcClients keeps one connection per peer address.
type rpcClients struct {
	icp   grpc.UnaryClientInterceptor // nil: none
	creds credentials.TransportCredentials
	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

func (c *rpcClients) conn(addr string) (*grpc.ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc, ok := c.conns[addr]; ok {
		return cc, nil
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(c.creds),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(jsonCodec{}.Name())),
	}
	if c.icp != nil {
		opts = append(opts, grpc.WithUnaryInterceptor(c.icp))
	}
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	if c.conns == nil {
		c.conns = map[string]*grpc.ClientConn{}
	}
	c.conns[addr] = cc
	return cc, nil
}

func (c *rpcClients) call(ctx context.Context, addr, method string, in, out any, opts ...grpc.CallOption) error {
	cc, err := c.conn(addr)
	if err != nil {
		return err
	}
	if err := cc.Invoke(ctx, "/"+rpcService+"/"+method, in, out, opts...); err != nil {
		return fmt.Errorf("calling %s on %s: %w", method, addr, err)
	}
	return nil
}

func (c *rpcClients) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cc := range c.conns {
		_ = cc.Close()
	}
	c.conns = nil
}

// unreachable reports whether an RPC failed before reaching a handler that
// could have acted (the peer is down or unknown), as opposed to an answer.
func unreachable(err error) bool {
	s, ok := status.FromError(errors.Unwrap(err))
	if !ok {
		s, ok = status.FromError(err)
	}
	if !ok {
		return true
	}
	switch s.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}
