package ctl

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Exit codes of floe ctl and floe status; see the package documentation.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitUnreachable = 3
	ExitNotReady    = 4
	ExitAuth        = 5
	ExitNotFound    = 6
	ExitRefused     = 7
)

// ExitError carries the process exit code an error should end the command with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode returns the exit code for an error returned by a command of this package:
// 0 for nil, the code of an ExitError in the chain, the code a gRPC status maps to,
// else 1.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if st, ok := status.FromError(err); ok {
		return codeFor(st.Code())
	}
	return ExitFailure
}

// usageErrorf is a bad flag or argument (exit code 2).
func usageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

func usageError(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

func codeFor(c codes.Code) int {
	switch c {
	case codes.OK:
		return ExitOK
	case codes.Unavailable, codes.DeadlineExceeded:
		return ExitUnreachable
	case codes.Unauthenticated, codes.PermissionDenied:
		return ExitAuth
	case codes.NotFound:
		return ExitNotFound
	case codes.InvalidArgument, codes.AlreadyExists, codes.FailedPrecondition:
		return ExitRefused
	}
	return ExitFailure
}

// rpcError turns an error of a gRPC call into an ExitError whose text is the server's
// status message (not grpc's "rpc error: code = ..." form).
func rpcError(addr string, err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("floe at %s did not answer: %w", addr, err)}
		}
		return &ExitError{Code: ExitFailure, Err: err}
	}
	msg := st.Message()
	code := codeFor(st.Code())
	var out error
	switch st.Code() {
	case codes.Unavailable:
		out = fmt.Errorf("cannot reach floe at %s: %s", addr, msg)
	case codes.DeadlineExceeded:
		out = fmt.Errorf("floe at %s did not answer in time: %s", addr, msg)
	case codes.Unauthenticated:
		// The node cannot know how the token was (not) given; the CLI does.
		out = fmt.Errorf("unauthenticated: %s (give a token of the right scope with --token, --token-file or FLOE_TOKEN)", msg)
	case codes.PermissionDenied:
		out = fmt.Errorf("permission denied: %s", msg)
	case codes.NotFound:
		out = withKind("not found", msg)
	case codes.InvalidArgument, codes.AlreadyExists, codes.FailedPrecondition:
		out = withKind("refused", msg)
	case codes.Unimplemented:
		out = fmt.Errorf("not supported by the node at %s (older version?): %s", addr, msg)
	default:
		out = fmt.Errorf("%s", msg)
	}
	return &ExitError{Code: code, Err: out}
}

// withKind prefixes msg with the kind of error unless the node's message
// already starts with it, so it is said once ("not found: table web.x").
func withKind(kind, msg string) error {
	if strings.HasPrefix(msg, kind) {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s", kind, msg)
}
