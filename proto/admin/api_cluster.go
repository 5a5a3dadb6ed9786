package admin

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// clusterAPI implements ClusterService over a Backend. Reads come from the
// node's status report (its replicated view of the group); writes are the
// backend's, which forwards them to the leader.
type clusterAPI struct {
	adminv1.UnimplementedClusterServiceServer
	b Backend
}

func (a *clusterAPI) ListMembers(ctx context.Context, _ *adminv1.ListMembersRequest) (*adminv1.ListMembersResponse, error) {
	rep, err := a.b.Report(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	out := &adminv1.ListMembersResponse{Leader: rep.Leader, Members: toProto(rep.Members, memberToProto)}
	return out, nil
}

// GetLeader names the leader, its admin address and when this node saw
// leadership change last.
func (a *clusterAPI) GetLeader(ctx context.Context, _ *adminv1.GetLeaderRequest) (*adminv1.GetLeaderResponse, error) {
	rep, err := a.b.Report(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	out := &adminv1.GetLeaderResponse{Id: rep.Leader, AdminAddr: rep.LeaderAddr}
	if !rep.LeaderSince.IsZero() {
		out.Since = timestamppb.New(rep.LeaderSince)
	}
	return out, nil
}

func (a *clusterAPI) TransferLeadership(ctx context.Context, req *adminv1.TransferLeadershipRequest) (*adminv1.WriteResponse, error) {
	return write(a.b.TransferLeadership(ctx, req.GetId()))
}

func (a *clusterAPI) DrainNode(ctx context.Context, req *adminv1.DrainNodeRequest) (*adminv1.WriteResponse, error) {
	if err := required("id", req.GetId()); err != nil {
		return nil, err
	}
	return write(a.b.DrainNode(ctx, req.GetId()))
}

func (a *clusterAPI) UndrainNode(ctx context.Context, req *adminv1.UndrainNodeRequest) (*adminv1.WriteResponse, error) {
	if err := required("id", req.GetId()); err != nil {
		return nil, err
	}
	return write(a.b.UndrainNode(ctx, req.GetId()))
}

func (a *clusterAPI) RemoveNode(ctx context.Context, req *adminv1.RemoveNodeRequest) (*adminv1.WriteResponse, error) {
	if err := required("id", req.GetId()); err != nil {
		return nil, err
	}
	return write(a.b.RemoveNode(ctx, req.GetId()))
}

// write turns a backend write's answer into the API's.
func write(r WriteResult, err error) (*adminv1.WriteResponse, error) {
	if err != nil {
		return nil, apiError(err)
	}
	return writeResponse(r), nil
}

// healthAPI implements HealthService. It needs only a Source and answers
// live even when the report cannot be built: liveness is that the process
// answers at all.
type healthAPI struct {
	adminv1.UnimplementedHealthServiceServer
	src Source
}

func (h *healthAPI) Check(ctx context.Context, _ *adminv1.HealthCheckRequest) (*adminv1.HealthCheckResponse, error) {
	out := &adminv1.HealthCheckResponse{Live: true, Ready: true}
	if err := h.src.Ready(); err != nil {
		out.Ready, out.Reason = false, err.Error()
	}
	if rep, err := h.src.Report(ctx); err == nil {
		out.Node, out.Leader, out.Problems, out.State = rep.Node, rep.Leader, rep.Problems, rep.State
		for _, b := range rep.Brokers {
			out.Brokers = append(out.Brokers, &adminv1.KafkaBroker{Addr: b.Addr, NodeId: b.NodeID, Up: b.Up,
				DownSince: rfc3339(b.Since), LastResponse: rfc3339(b.LastResponse), Reason: b.Reason, Partitions: int32(b.Partitions)})
		}
	}
	return out, nil
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
