package restcatalog

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
)

// defaultPageSize applies when a client starts paging (sends pageToken)
// without a pageSize.
const defaultPageSize = 100

// page selects the part of keys (sorted, unique) a request asks for. The
// token is the last key of the previous page, so a page stays correct when
// tables are added or dropped between requests. Without a pageToken the
// spec wants everything in one response; next is then empty.
func page(r *http.Request, keys []string) (from, to int, next string, err error) {
	q := r.URL.Query()
	_, paging := q["pageToken"]
	size := defaultPageSize
	if v := q.Get("pageSize"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 {
			return 0, 0, "", fmt.Errorf("pageSize %q: use a whole number from 1: %w", v, ErrBadRequest)
		}
		size = n
		// A pageSize alone also pages: clients that send one expect at
		// most that many results.
		paging = true
	}
	if !paging {
		return 0, len(keys), "", nil
	}
	if tok := q.Get("pageToken"); tok != "" {
		after, derr := base64.RawURLEncoding.DecodeString(tok)
		if derr != nil {
			return 0, 0, "", fmt.Errorf("pageToken %q is not a token this server issued: %w", tok, ErrBadRequest)
		}
		for from < len(keys) && keys[from] <= string(after) {
			from++
		}
	}
	to = min(from+size, len(keys))
	if to < len(keys) {
		next = base64.RawURLEncoding.EncodeToString([]byte(keys[to-1]))
	}
	return from, to, next, nil
}
