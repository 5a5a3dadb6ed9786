package restsync

import (
	"errors"
	"fmt"
)

// Sentinel errors of the restsync package.
var (
	// ErrAuth: the catalog refused the credentials (401/403).
	ErrAuth = errors.New("rest catalog refused the credentials")
	// ErrCatalog: any other error answer of the catalog.
	ErrCatalog = errors.New("rest catalog error")
)

// apiError is an error answer, with the spec's ErrorModel when the body
// has one.
type apiError struct {
	Op      string
	Status  int
	Type    string
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s: %s", e.Op, e.Status, e.Type, e.Message)
}

func (e *apiError) Unwrap() error {
	if e.Status == 401 || e.Status == 403 {
		return ErrAuth
	}
	return ErrCatalog
}
