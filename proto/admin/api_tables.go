package admin

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// tableAPI implements TableService over a Backend: mappings (the topic to
// table routes made through the API or read from configuration) and the
// tables they produce. The API checks that required fields are present;
// the content of a mapping is validated by the backend, which knows the
// rules (and the configuration) and answers ErrInvalid naming the field.
type tableAPI struct {
	adminv1.UnimplementedTableServiceServer
	b Backend
}

func (a *tableAPI) ListMappings(ctx context.Context, _ *adminv1.ListMappingsRequest) (*adminv1.ListMappingsResponse, error) {
	ms, err := a.b.Mappings(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	return &adminv1.ListMappingsResponse{Mappings: toProto(ms, mappingToProto)}, nil
}

func (a *tableAPI) GetMapping(ctx context.Context, req *adminv1.GetMappingRequest) (*adminv1.Mapping, error) {
	if err := required("name", req.GetName()); err != nil {
		return nil, err
	}
	ms, err := a.b.Mappings(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	for _, m := range ms {
		if m.Name == req.GetName() {
			return mappingToProto(m), nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "mapping %q not found", req.GetName())
}

func (a *tableAPI) CreateMapping(ctx context.Context, req *adminv1.CreateMappingRequest) (*adminv1.WriteResponse, error) {
	m, err := mappingFromProto(req.GetMapping())
	if err != nil {
		return nil, err
	}
	return write(a.b.PutMapping(ctx, m, true))
}

func (a *tableAPI) UpdateMapping(ctx context.Context, req *adminv1.UpdateMappingRequest) (*adminv1.WriteResponse, error) {
	// The HTTP route names the mapping in the path (name) and sends the
	// mapping as the body, where its name may be left out.
	if req.GetMapping() != nil && req.GetName() != "" {
		switch req.GetMapping().GetName() {
		case "":
			req.Mapping.Name = req.GetName()
		case req.GetName():
		default:
			return nil, status.Errorf(codes.InvalidArgument, "mapping.name: %q does not match the name %q in the path", req.GetMapping().GetName(), req.GetName())
		}
	}
	m, err := mappingFromProto(req.GetMapping())
	if err != nil {
		return nil, err
	}
	return write(a.b.PutMapping(ctx, m, false))
}

func (a *tableAPI) DeleteMapping(ctx context.Context, req *adminv1.DeleteMappingRequest) (*adminv1.WriteResponse, error) {
	if err := required("name", req.GetName()); err != nil {
		return nil, err
	}
	return write(a.b.DeleteMapping(ctx, req.GetName()))
}

// ListTables and GetTable answer from the cluster-wide report, as the
// console does: a table's figures are the same whichever node is asked.
func (a *tableAPI) ListTables(ctx context.Context, _ *adminv1.ListTablesRequest) (*adminv1.ListTablesResponse, error) {
	rep, err := a.b.ClusterReport(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	return &adminv1.ListTablesResponse{Tables: toProto(rep.Tables, tableToProto)}, nil
}

func (a *tableAPI) GetTable(ctx context.Context, req *adminv1.GetTableRequest) (*adminv1.TableStatus, error) {
	if err := required("table", req.GetTable()); err != nil {
		return nil, err
	}
	rep, err := a.b.ClusterReport(ctx)
	if err != nil {
		return nil, apiError(err)
	}
	for _, t := range rep.Tables {
		if t.Table == req.GetTable() {
			return tableToProto(t), nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "table %q not found", req.GetTable())
}

func (a *tableAPI) PauseTable(ctx context.Context, req *adminv1.PauseTableRequest) (*adminv1.WriteResponse, error) {
	if err := required("table", req.GetTable()); err != nil {
		return nil, err
	}
	return write(a.b.PauseTable(ctx, req.GetTable()))
}

func (a *tableAPI) ResumeTable(ctx context.Context, req *adminv1.ResumeTableRequest) (*adminv1.WriteResponse, error) {
	if err := required("table", req.GetTable()); err != nil {
		return nil, err
	}
	return write(a.b.ResumeTable(ctx, req.GetTable(), req.GetSkip()))
}

func (a *tableAPI) RewindTable(ctx context.Context, req *adminv1.RewindTableRequest) (*adminv1.RewindTableResponse, error) {
	rr, err := rewindFromProto(req)
	if err != nil {
		return nil, err
	}
	res, err := a.b.RewindTable(ctx, rr)
	if err != nil {
		return nil, apiError(err)
	}
	return &adminv1.RewindTableResponse{RaftIndex: res.Index, Rewind: rewindToProto(&res.Rewind)}, nil
}

func (a *tableAPI) ListSnapshots(ctx context.Context, req *adminv1.ListSnapshotsRequest) (*adminv1.ListSnapshotsResponse, error) {
	if err := required("table", req.GetTable()); err != nil {
		return nil, err
	}
	snaps, err := a.b.Snapshots(ctx, req.GetTable())
	if err != nil {
		return nil, apiError(err)
	}
	out := &adminv1.ListSnapshotsResponse{Snapshots: toProto(snaps, snapshotToProto)}
	for _, s := range snaps {
		if s.Current {
			out.CurrentSnapshotId = s.ID
		}
	}
	return out, nil
}

// RunMaintenance runs the backend's maintenance and passes its report on
// as JSON: the report's shape belongs to the maintenance code and changes
// with it, so the API does not fix it in the proto.
func (a *tableAPI) RunMaintenance(ctx context.Context, req *adminv1.RunMaintenanceRequest) (*adminv1.RunMaintenanceResponse, error) {
	if err := required("table", req.GetTable()); err != nil {
		return nil, err
	}
	res, err := a.b.Maintain(ctx, req.GetTable(), req.GetForce())
	if err != nil {
		return nil, apiError(err)
	}
	js, err := json.Marshal(res)
	if err != nil {
		return nil, status.Error(codes.Internal, fmt.Sprintf("encoding maintenance report: %v", err))
	}
	out := &adminv1.RunMaintenanceResponse{ResultJson: string(js)}
	if rep, err := a.b.Report(ctx); err == nil {
		out.Node = rep.Node
	}
	return out, nil
}
