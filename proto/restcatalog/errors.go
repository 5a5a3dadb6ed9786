package restcatalog

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/apache/iceberg-go/catalog"
)

// Sentinel errors of the package; each maps to one HTTP status and error
// type of the spec's ErrorModel.
var (
	// ErrNoSuchView: Floe makes no views (404).
	ErrNoSuchView = errors.New("floe makes no views")
	// ErrBadRequest: malformed path, query or header (400).
	ErrBadRequest = errors.New("bad request")
	// ErrReadOnly: a write to a Floe-managed catalog (403).
	ErrReadOnly = errors.New("floe tables have one writer, their floe committer: the catalog is read-only")
	// ErrUnsupported: a route this server does not serve (406).
	ErrUnsupported = errors.New("operation not supported by the floe REST catalog")
	// ErrUnavailable: a strong read could not reach the leader (503).
	ErrUnavailable = errors.New("catalog temporarily unavailable")
)

// errorModel is the spec's IcebergErrorResponse.
type errorModel struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// classify maps an error to its HTTP status and the exception type that
// Iceberg clients (Java, PyIceberg, iceberg-go) turn into their own errors.
func classify(err error) (int, string) {
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return http.StatusNotFound, "NoSuchTableException"
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		return http.StatusNotFound, "NoSuchNamespaceException"
	case errors.Is(err, ErrNoSuchView):
		return http.StatusNotFound, "NoSuchViewException"
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest, "BadRequestException"
	case errors.Is(err, ErrReadOnly):
		return http.StatusForbidden, "ForbiddenException"
	case errors.Is(err, ErrUnsupported):
		return http.StatusNotAcceptable, "UnsupportedOperationException"
	case errors.Is(err, ErrUnavailable):
		return http.StatusServiceUnavailable, "ServiceUnavailableException"
	}
	return http.StatusInternalServerError, "InternalServerError"
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorModel{Error: errorBody{Message: msg, Type: typ, Code: status}})
}

// writeOAuthError answers the OAuth token endpoint in the spec's
// OAuthError shape ({"error", "error_description"}, RFC 6749 5.2).
func writeOAuthError(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// refuseAuth writes an auth refusal in the spec's error format; it is the
// refuse callback of auth.Tokens.Require.
func refuseAuth(w http.ResponseWriter, _ *http.Request, status int, err error) {
	typ := "NotAuthorizedException"
	if status == http.StatusForbidden {
		typ = "ForbiddenException"
	}
	writeError(w, status, typ, err.Error())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
