package auth

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/floe-io/floe/internal/config"
)

// Scope is what a token may do.
type Scope string

// Scopes, weakest first. Admin includes read.
const (
	ScopeRead  Scope = "read"
	ScopeAdmin Scope = "admin"
)

// Sentinel errors of the auth package.
var (
	// ErrNoToken: the request carries no bearer token (HTTP 401).
	ErrNoToken = errors.New("no bearer token")
	// ErrBadToken: the token is not one of the configured tokens (HTTP 401).
	ErrBadToken = errors.New("unknown bearer token")
	// ErrScope: the token is valid but its scope does not allow the
	// operation (HTTP 403).
	ErrScope = errors.New("token scope does not allow this operation")
	// ErrScopeName: a configured token names a scope that does not exist.
	// The inline grammar is config's (config.ParseInlineTokens).
	ErrScopeName = config.ErrTokenScope
)

// Tokens is a set of accepted bearer tokens. The zero value and nil accept
// every request (authentication off).
type Tokens struct {
	// Tokens are kept as SHA-256 digests: a lookup then does not compare
	// secrets byte by byte, and a heap dump shows no token.
	byHash map[[32]byte]Scope
}

// Load reads tokens from file (one "TOKEN SCOPE" per line; blank lines and
// lines starting with # are skipped; SCOPE defaults to read) and from
// inline ("TOKEN:SCOPE,TOKEN2:SCOPE", the form of FLOE_AUTH_TOKENS). Both
// may be empty: then authentication is off.
func Load(file, inline string) (*Tokens, error) {
	t := &Tokens{byHash: map[[32]byte]Scope{}}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("reading auth tokens: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			fields := strings.Fields(line)
			scope := ""
			if len(fields) > 1 {
				scope = fields[1]
			}
			if len(fields) > 2 {
				return nil, fmt.Errorf("auth tokens file %s line %d: want TOKEN [SCOPE]", file, n)
			}
			if err := t.add(fields[0], scope); err != nil {
				return nil, fmt.Errorf("auth tokens file %s line %d: %w", file, n, err)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reading auth tokens %s: %w", file, err)
		}
	}
	items, err := config.ParseInlineTokens(inline)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if err := t.add(it.Token, it.Scope); err != nil {
			return nil, fmt.Errorf("auth.tokens: %w", err)
		}
	}
	return t, nil
}

func isScope(s string) bool { return s == string(ScopeRead) || s == string(ScopeAdmin) }

func (t *Tokens) add(tok, scope string) error {
	if scope == "" {
		scope = string(ScopeRead)
	}
	if !isScope(scope) {
		return fmt.Errorf("%w: scope %q: use read or admin", ErrScopeName, scope)
	}
	if len(tok) < 16 {
		return errors.New("token shorter than 16 characters")
	}
	t.byHash[sha256.Sum256([]byte(tok))] = Scope(scope)
	return nil
}

// Enabled reports whether any token is configured.
func (t *Tokens) Enabled() bool { return t != nil && len(t.byHash) > 0 }

// Len returns how many tokens are configured.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.byHash)
}

// Check authorizes a request for need: nil when authentication is off or
// the request's bearer token has a scope that includes need.
func (t *Tokens) Check(r *http.Request, need Scope) error {
	return t.CheckHeader(r.Header.Get("Authorization"), need)
}

// CheckHeader is Check for the value of an Authorization header ("Bearer
// TOKEN"), for protocols that carry it elsewhere (gRPC metadata).
func (t *Tokens) CheckHeader(h string, need Scope) error {
	if !t.Enabled() {
		return nil
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return ErrNoToken
	}
	have, ok := t.byHash[sha256.Sum256([]byte(strings.TrimSpace(tok)))]
	if !ok {
		return ErrBadToken
	}
	if need == ScopeAdmin && have != ScopeAdmin {
		return ErrScope
	}
	return nil
}

// Status returns the HTTP status for a Check error: 401 for a missing or
// unknown token, 403 for a scope that is too weak.
func Status(err error) int {
	if errors.Is(err, ErrScope) {
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

// Require wraps next so that only requests whose token includes need get
// through; refusals are written by refuse (each API has its own error
// format), or as plain text when refuse is nil.
func (t *Tokens) Require(need Scope, refuse func(w http.ResponseWriter, r *http.Request, status int, err error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := t.Check(r, need); err != nil {
			status := Status(err)
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="floe"`)
			}
			if refuse != nil {
				refuse(w, r, status, err)
				return
			}
			http.Error(w, err.Error(), status)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// PeerToken returns the first configured token whose scope includes need,
// read again from the same file and list as Load ("" when none): a node
// uses it to call its peers' admin APIs, which share its configuration.
func PeerToken(file, inline string, need Scope) string {
	ok := func(scope string) bool { return need == ScopeRead || scope == string(ScopeAdmin) }
	if file != "" {
		if data, err := os.ReadFile(file); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Fields(strings.TrimSpace(line))
				if len(f) == 0 || strings.HasPrefix(f[0], "#") {
					continue
				}
				scope := string(ScopeRead)
				if len(f) > 1 {
					scope = f[1]
				}
				if ok(scope) {
					return f[0]
				}
			}
		}
	}
	items, _ := config.ParseInlineTokens(inline) // refused at start-up already
	for _, it := range items {
		if ok(it.Scope) {
			return it.Token
		}
	}
	return ""
}

// Fingerprint names a token without revealing it, for the record of who
// made a change: "token:" and the first 8 hex digits of its SHA-256 (an
// operator finds theirs with `printf %s TOKEN | sha256sum | cut -c1-8`).
func Fingerprint(token string) string {
	h := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return "token:" + hex.EncodeToString(h[:4])
}
