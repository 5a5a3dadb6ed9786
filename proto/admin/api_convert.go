package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// This file converts between the API's protobuf messages and the package's
// domain types, and maps Backend errors to gRPC status codes. Keeping every
// conversion here lets the service files read as plain request handling.

// apiError maps an error to a gRPC status error, the single place where the
// Backend's sentinels become codes (grpc-gateway then turns the codes into
// HTTP statuses: 400, 404, 409, 400, 503, 504, 500). The message is the
// error text, which names the field or thing at fault.
func apiError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := grpcstatus.FromError(err); ok {
		return err // already a status (e.g. from a request check)
	}
	code := codes.Internal
	switch {
	case errors.Is(err, ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, ErrExists):
		code = codes.AlreadyExists
	case errors.Is(err, ErrConflict):
		code = codes.FailedPrecondition
	case errors.Is(err, ErrUnavailable):
		code = codes.Unavailable
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	}
	if errors.Is(err, ErrUpgradeRequired) {
		st, derr := grpcstatus.New(code, err.Error()).WithDetails(&errdetails.ErrorInfo{Reason: UpgradeReason, Domain: ErrorDomain})
		if derr == nil {
			return st.Err()
		}
	}
	return grpcstatus.Error(code, err.Error())
}

// invalid is an InvalidArgument answer naming field.
func invalid(field, format string, args ...any) error {
	return grpcstatus.Error(codes.InvalidArgument, field+": "+fmt.Sprintf(format, args...))
}

// required checks that a request field is set.
func required(field, v string) error {
	if v == "" {
		return invalid(field, "required")
	}
	return nil
}

func writeResponse(r WriteResult) *adminv1.WriteResponse {
	return &adminv1.WriteResponse{RaftIndex: r.Index, Unchanged: r.Unchanged, Message: r.Message}
}

// ts converts a time, leaving the zero time unset rather than 0001-01-01.
func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// mappingFromProto converts a request's mapping. Durations are Go duration
// strings; empty leaves them unset (the backend applies defaults).
func mappingFromProto(pm *adminv1.Mapping) (Mapping, error) {
	if pm == nil {
		return Mapping{}, invalid("mapping", "required")
	}
	if err := required("mapping.name", pm.Name); err != nil {
		return Mapping{}, err
	}
	t := config.Table{
		Topic:            pm.Topic,
		TopicRegex:       pm.TopicRegex,
		Namespace:        pm.Namespace,
		Name:             pm.Table,
		Format:           pm.Format,
		Subject:          pm.Subject,
		ErrorMode:        pm.ErrorMode,
		DeadLetterTopic:  pm.DeadLetterTopic,
		Tombstones:       pm.Tombstones,
		StartOffset:      pm.StartOffset,
		SnapshotMaxCount: int(pm.SnapshotMaxCount),
		// 0 leaves the node's; the backend's validation bounds the rest,
		// naming mapping.max_nesting_depth and mapping.max_columns.
		MaxNestingDepth: int(pm.MaxNestingDepth),
		MaxColumns:      int(pm.MaxColumns),
		// Validated by the backend, naming mapping.formats.
		Formats: slices.Clone(pm.Formats),
		Mode:    pm.Mode,
		Key:     slices.Clone(pm.Key),
	}
	t.StorageClass = pm.StorageClass // the backend's validation names mapping.storage_class
	// Bounded by the backend, naming mapping.delta.checkpoint_interval.
	t.Delta.CheckpointInterval = int(pm.DeltaCheckpointInterval)
	var err error
	if t.Delta.LogRetention, err = durationField("mapping.delta_log_retention", pm.DeltaLogRetention); err != nil {
		return Mapping{}, err
	}
	if t.SnapshotMaxAge, err = durationField("mapping.snapshot_max_age", pm.SnapshotMaxAge); err != nil {
		return Mapping{}, err
	}
	if t.OrphanMinAge, err = durationField("mapping.orphan_min_age", pm.OrphanMinAge); err != nil {
		return Mapping{}, err
	}
	for _, f := range pm.PartitionBy {
		if f == nil {
			continue
		}
		t.PartitionBy = append(t.PartitionBy, config.PartitionField{Column: f.Column, Transform: f.Transform})
	}
	// Source is output only: the backend decides it.
	return Mapping{Name: pm.Name, Table: t}, nil
}

func durationField(field, s string) (config.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, invalid(field, "%q is not a duration", s)
	}
	return config.Duration(d), nil
}

func durationString(d config.Duration) string {
	if d == 0 {
		return ""
	}
	return d.D().String()
}

// toProto converts each of xs by conv; nil for none, as appending gave.
func toProto[T, P any](xs []T, conv func(T) P) []P {
	var out []P
	for _, x := range xs {
		out = append(out, conv(x))
	}
	return out
}

func mappingToProto(m Mapping) *adminv1.Mapping {
	t := m.Table
	pm := &adminv1.Mapping{
		Name:             m.Name,
		Topic:            t.Topic,
		TopicRegex:       t.TopicRegex,
		Namespace:        t.Namespace,
		Table:            t.Name,
		Format:           t.Format,
		Subject:          t.Subject,
		ErrorMode:        t.ErrorMode,
		DeadLetterTopic:  t.DeadLetterTopic,
		Tombstones:       t.Tombstones,
		StartOffset:      t.StartOffset,
		SnapshotMaxAge:   durationString(t.SnapshotMaxAge),
		SnapshotMaxCount: int32(t.SnapshotMaxCount),
		OrphanMinAge:     durationString(t.OrphanMinAge),
		Source:           m.Source,
		MaxNestingDepth:  int32(t.MaxNestingDepth),
		MaxColumns:       int32(t.MaxColumns),
		Formats:          slices.Clone(t.Formats),
		Mode:             t.Mode,
		Key:              slices.Clone(t.Key),
	}
	pm.StorageClass = t.StorageClass
	pm.DeltaCheckpointInterval, pm.DeltaLogRetention = int32(t.Delta.CheckpointInterval), durationString(t.Delta.LogRetention)
	for _, f := range t.PartitionBy {
		pm.PartitionBy = append(pm.PartitionBy, &adminv1.PartitionField{Column: f.Column, Transform: f.Transform})
	}
	return pm
}

func memberToProto(m status.MemberReport) *adminv1.Member {
	return &adminv1.Member{
		Id: m.ID, Role: m.Role, Zone: m.Zone, Version: m.Version,
		Healthy: m.Healthy, Draining: m.Draining,
		Partitions: int32(m.Partitions), Committers: int32(m.Committers),
		UnreachableSeconds: m.Unreachable, UpgradeRequired: m.UpgradeRequired, StorageFailing: m.StorageFailing,
		ClockSkewed: m.ClockSkewed, ClockOffsetSeconds: m.ClockOffset,
	}
}

func tableToProto(t status.TableReport) *adminv1.TableStatus {
	out := &adminv1.TableStatus{
		Table:               t.Table,
		State:               t.State,
		Reason:              t.Reason,
		Rows:                t.Rows,
		DataFiles:           t.DataFiles,
		DeadLetterRows:      t.DeadLetterRows,
		Snapshots:           int32(t.Snapshots),
		Commits:             t.Commits,
		MetadataLocation:    t.MetadataLocation,
		LastCommit:          ts(t.LastCommit),
		FreshnessSeconds:    t.FreshnessSec,
		PendingEntries:      int32(t.PendingEntries),
		RecordsConsumed:     t.Consumed,
		RecordsDeadLettered: t.DeadLettered,
		RecordsSkipped:      t.Skipped,
		CommitFailures:      t.CommitFailures,
		Committer:           t.Committer,
		Paused:              t.Paused,
		Rewind:              rewindToProto(t.Rewind),
		Formats:             slices.Clone(t.Formats),
	}
	if d := t.Delta; d != nil {
		out.Delta = &adminv1.DeltaStatus{Version: d.Version, Sequence: d.Sequence}
	}
	for _, p := range t.Partitions {
		out.Partitions = append(out.Partitions, &adminv1.PartitionStatus{
			Topic: p.Topic, Partition: p.Partition, Start: p.Start, Committed: p.Committed,
			Recorded: p.Recorded, HighWatermark: p.HighWatermark, Lag: p.Lag, LagSeconds: p.LagSec,
			Node: p.Node, Epoch: p.Epoch, LastError: p.LastError, Held: p.Held,
		})
	}
	for _, c := range t.Catalogs {
		out.Catalogs = append(out.Catalogs, &adminv1.CatalogStatus{
			Catalog: c.Catalog, InSync: c.InSync, LagSeconds: c.LagSec, LastSync: ts(c.LastSync),
			LastError: c.LastError, Failures: c.Failures, MetadataLocation: c.MetadataLocation,
		})
	}
	return out
}

func policyToProto(p string) adminv1.ReplayPolicy {
	switch p {
	case ReplayAppend:
		return adminv1.ReplayPolicy_APPEND
	case ReplayReplace:
		return adminv1.ReplayPolicy_REPLACE
	}
	return adminv1.ReplayPolicy_REPLAY_POLICY_UNSPECIFIED
}

func rewindToProto(r *status.RewindReport) *adminv1.Rewind {
	if r == nil {
		return nil
	}
	return &adminv1.Rewind{
		Generation:  r.Generation,
		Policy:      policyToProto(r.Policy),
		At:          ts(r.At),
		From:        offsetsToProto(r.From),
		To:          offsetsToProto(r.To),
		ReplaceDone: r.ReplaceDone,
		Describe:    r.Describe,
	}
}

func offsetsToProto(os []status.PartitionOffset) []*adminv1.PartitionOffset {
	var out []*adminv1.PartitionOffset
	for _, o := range os {
		out = append(out, &adminv1.PartitionOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
	}
	return out
}

// rewindFromProto checks a rewind request: exactly one target (the oneof
// guarantees at most one) and an explicit policy.
func rewindFromProto(req *adminv1.RewindTableRequest) (RewindRequest, error) {
	if err := required("table", req.GetTable()); err != nil {
		return RewindRequest{}, err
	}
	rr := RewindRequest{Table: req.GetTable()}
	switch p := req.GetPolicy(); p {
	case adminv1.ReplayPolicy_APPEND:
		rr.Policy = ReplayAppend
	case adminv1.ReplayPolicy_REPLACE:
		rr.Policy = ReplayReplace
	default:
		return RewindRequest{}, invalid("policy", "must be APPEND or REPLACE")
	}
	switch t := req.GetTarget().(type) {
	case *adminv1.RewindTableRequest_Earliest:
		if !t.Earliest {
			return RewindRequest{}, invalid("target", "earliest must be true when set")
		}
		rr.Earliest = true
	case *adminv1.RewindTableRequest_Latest:
		if !t.Latest {
			return RewindRequest{}, invalid("target", "latest must be true when set")
		}
		rr.Latest = true
	case *adminv1.RewindTableRequest_Timestamp:
		if t.Timestamp == nil || !t.Timestamp.IsValid() {
			return RewindRequest{}, invalid("target", "timestamp is not a valid time")
		}
		rr.Timestamp = t.Timestamp.AsTime()
	case *adminv1.RewindTableRequest_Offsets:
		if t.Offsets == nil || len(t.Offsets.Offsets) == 0 {
			return RewindRequest{}, invalid("target", "offsets must name at least one partition")
		}
		for i, o := range t.Offsets.Offsets {
			if o == nil || o.Topic == "" {
				return RewindRequest{}, invalid(fmt.Sprintf("offsets[%d].topic", i), "required")
			}
			rr.Offsets = append(rr.Offsets, status.PartitionOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
		}
	default:
		return RewindRequest{}, invalid("target", "exactly one of earliest, latest, timestamp or offsets is required")
	}
	return rr, nil
}

func snapshotToProto(s SnapshotInfo) *adminv1.Snapshot {
	return &adminv1.Snapshot{
		SnapshotId: s.ID, ParentSnapshotId: s.ParentID, SequenceNumber: s.Sequence,
		Timestamp: ts(s.At), Operation: s.Operation, ManifestList: s.ManifestList, Summary: s.Summary,
	}
}
