package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTokenScope: an inline token (auth.tokens, FLOE_AUTH_TOKENS) names a
// scope that does not exist. Package auth reports it as its ErrScopeName.
var ErrTokenScope = errors.New("unknown token scope")

// InlineToken is one item of an inline token list: the secret and its
// scope ("read" when the item names none).
type InlineToken struct {
	Token, Scope string
}

// ParseInlineTokens parses "TOKEN[:SCOPE],TOKEN2[:SCOPE]" (blank items
// skipped). The grammar lives here, not in package auth, so that validation
// refuses what the node would refuse without config importing auth (and
// with it net/http and os into the pure FSM's reach: cluster/imports_test).
func ParseInlineTokens(inline string) ([]InlineToken, error) {
	var out []InlineToken
	for i, item := range strings.Split(inline, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		tok, scope, err := splitInline(item)
		if err == nil && len(tok) < 16 {
			err = errors.New("token shorter than 16 characters")
		}
		if err != nil {
			return nil, fmt.Errorf("auth.tokens item %d: %w", i+1, err)
		}
		out = append(out, InlineToken{Token: tok, Scope: scope})
	}
	return out, nil
}

// splitInline splits "TOKEN[:SCOPE]". The scope follows the last colon, so
// a token may contain colons, but then it must name its scope: text after
// the last colon that is not a scope is refused rather than taken as part
// of a read token (":superuser" or ":Admin" used to make a read token
// whose secret ended with the suffix).
func splitInline(item string) (tok, scope string, err error) {
	j := strings.LastIndexByte(item, ':')
	if j < 0 {
		return item, "read", nil
	}
	tok, scope = item[:j], item[j+1:]
	if scope == "read" || scope == "admin" {
		return tok, scope, nil
	}
	if scopeLike(scope) {
		return "", "", fmt.Errorf("%w: scope %q: use read or admin", ErrTokenScope, scope)
	}
	// Not a word: likely part of a secret, which an error must not repeat.
	return "", "", fmt.Errorf("%w: the text after the last ':' is not a scope; a token containing ':' must end with :read or :admin", ErrTokenScope)
}

// scopeLike reports whether s looks like an attempt at a scope name (a
// short word), so that naming it in an error reveals no secret.
func scopeLike(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
