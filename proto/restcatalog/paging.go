package restcatalog

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
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
		after, ok := parseToken(tok)
		if !ok {
			return 0, 0, "", fmt.Errorf("pageToken %q is not a token this server issued: %w", tok, ErrBadRequest)
		}
		for from < len(keys) && keys[from] <= after {
			from++
		}
	}
	to = min(from+size, len(keys))
	if to < len(keys) {
		next = issueToken(keys[to-1])
	}
	return from, to, next, nil
}

// A page token is the last key of the page, base64url, followed by its
// CRC-32C: a token the server did not issue (a typo, another server's) fails
// the check and is refused instead of silently starting a page somewhere.
// It is no secret and needs none: any key a client could name it may list.
var tokenTable = crc32.MakeTable(crc32.Castagnoli)

func issueToken(last string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(last)) + "." + strconv.FormatUint(uint64(crc32.Checksum([]byte(last), tokenTable)), 36)
}

func parseToken(tok string) (string, bool) {
	enc, sum, ok := strings.Cut(tok, ".")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || strconv.FormatUint(uint64(crc32.Checksum(b, tokenTable)), 36) != sum {
		return "", false
	}
	return string(b), true
}
