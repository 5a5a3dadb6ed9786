package auth

import (
	"strconv"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/config"
)

// FuzzInlineTokens parses arbitrary auth.tokens lists: no panic; an error
// never repeats a token (a secret); every token accepted authenticates
// with its scope.
func FuzzInlineTokens(f *testing.F) {
	for _, s := range []string{
		"LONGENOUGHTOKEN_123456:admin,other-token-0001",
		"LONGENOUGHTOKEN_123456:superuser",
		"tok:en:with:colons:read",
		"a:b:c",
		" , ,x:Admin",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inline string) {
		toks, err := Load("", inline)
		if err != nil {
			for _, item := range strings.Split(inline, ",") {
				item = strings.TrimSpace(item)
				j := strings.LastIndexByte(item, ':')
				if j < 0 {
					continue
				}
				// A short word after the last colon is named (a scope
				// attempt); the token before it never is.
				tok, suffix := item[:j], item[j+1:]
				if len(tok) >= 8 && !strings.Contains(strconv.Quote(suffix), tok) && strings.Contains(err.Error(), tok) {
					t.Fatalf("error %q repeats the token %q", err, tok)
				}
			}
			return
		}
		items, err := config.ParseInlineTokens(inline)
		if err != nil {
			t.Fatalf("Load accepted %q that the grammar refuses: %v", inline, err)
		}
		for _, it := range items {
			tok := it.Token
			if strings.TrimSpace(tok) != tok || tok == "" || strings.ContainsAny(tok, " \t") {
				continue // not presentable as one bearer token; Load's rules govern
			}
			if toks.CheckHeader("Bearer "+tok, ScopeRead) != nil {
				t.Fatalf("token %q of %q does not authenticate", tok, inline)
			}
		}
	})
}
