package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// bigBody is a JSON mapping whose namespace is n bytes, produced as it is
// read so that the client side allocates almost nothing.
func bigBody(n int64) io.Reader {
	return io.MultiReader(strings.NewReader(`{"name":"m","topic":"t","namespace":"`),
		io.LimitReader(repeatReader('n'), n), strings.NewReader(`"}`))
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestBodyLimits sends oversized bodies to the HTTP gateway: without a
// token the answer is 401 and the body is not read (the heap does not grow
// by its size); with a token a body over the cap answers 413 naming the
// limit, with or without a Content-Length; the backend never sees either.
func TestBodyLimits(t *testing.T) {
	const hundredMB = 100 << 20
	for _, tc := range []struct {
		name     string
		token    string
		size     int64
		chunked  bool
		max      int64
		wantCode int
		wantMsg  string
	}{
		{"unauthenticated 100 MB", "", hundredMB, false, 0, http.StatusUnauthorized, "no bearer token"},
		{"unauthenticated 100 MB chunked", "", hundredMB, true, 0, http.StatusUnauthorized, "no bearer token"},
		{"wrong token 100 MB", "wrong-token-0123456789", hundredMB, false, 0, http.StatusUnauthorized, "unknown bearer token"},
		{"admin 100 MB", adminToken, hundredMB, false, 0, http.StatusRequestEntityTooLarge, "limit of 4194304 bytes"},
		{"admin 5 MB chunked", adminToken, 5 << 20, true, 0, http.StatusRequestEntityTooLarge, "limit of 4194304 bytes"},
		{"read token 5 MB", readToken, 5 << 20, false, 0, http.StatusRequestEntityTooLarge, "limit of 4194304 bytes"},
		{"admin over a set cap", adminToken, 2048, false, 1024, http.StatusRequestEntityTooLarge, "limit of 1024 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBackend{}
			s := startAPI(t, f, Options{Log: discardLog(), Tokens: testTokens(t), MaxBodyBytes: tc.max})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code, body := rawPost(t, s.Addr(), "/v1/mappings", tc.token, tc.size, tc.chunked)
			runtime.ReadMemStats(&after)
			if code != tc.wantCode || !strings.Contains(string(body), tc.wantMsg) {
				t.Fatalf("answer %d %s, want %d with %q", code, body, tc.wantCode, tc.wantMsg)
			}
			var st struct{ Code int }
			if err := json.Unmarshal(body, &st); err != nil || st.Code == 0 {
				t.Errorf("answer %s is not a google.rpc.Status: %v", body, err)
			}
			// Whatever the server read it allocated; 16 MiB leaves room for
			// buffers and the test's own garbage, far below 100 MB.
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d-byte body: the process allocated %.1f MiB answering %d", tc.size, float64(grew)/(1<<20), code)
			if grew > 16<<20 {
				t.Errorf("the process allocated %d MiB answering; the body was read", grew>>20)
			}
			if c := f.lastCall(); c != "" {
				t.Errorf("backend called: %s", c)
			}
		})
	}
}

// TestGRPCMessageLimit: a gRPC message over the cap (the default, which is
// gRPC's own, or a set one) is refused with ResourceExhausted naming it,
// before any handler runs.
func TestGRPCMessageLimit(t *testing.T) {
	for _, tc := range []struct {
		max  int64
		size int
		want string
	}{
		{0, 5 << 20, "4194304"},
		{0, 100 << 20, "4194304"},
		{1024, 2048, "1024"},
	} {
		t.Run(fmt.Sprint(tc.max, "/", tc.size), func(t *testing.T) {
			f := &fakeBackend{}
			s := startAPI(t, f, Options{Log: discardLog(), Tokens: testTokens(t), MaxBodyBytes: tc.max})
			client := adminv1.NewTableServiceClient(dialGRPC(t, s.Addr()))
			ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminToken)
			_, err := client.CreateMapping(ctx, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m", Topic: "t", Namespace: strings.Repeat("n", tc.size)}})
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CreateMapping with a %d-byte namespace: %v, want ResourceExhausted naming %s", tc.size, err, tc.want)
			}
			if c := f.lastCall(); c != "" {
				t.Errorf("backend called: %s", c)
			}
		})
	}
}

// rawPost sends a POST of a bigBody over a plain connection and reads the
// answer while the body is still being written: the server answers before
// it has read the body and closes, which makes http.Client report the
// failed write instead of the answer.
func rawPost(t *testing.T, addr, path, token string, size int64, chunked bool) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hdr := "POST " + path + " HTTP/1.1\r\nHost: floe\r\nContent-Type: application/json\r\n"
	if token != "" {
		hdr += "Authorization: Bearer " + token + "\r\n"
	}
	if chunked {
		hdr += "Transfer-Encoding: chunked\r\n"
	} else {
		hdr += fmt.Sprintf("Content-Length: %d\r\n", size+int64(len(`{"name":"m","topic":"t","namespace":""}`)))
	}
	go func() {
		// Write errors are expected: the server stops reading.
		if _, err := io.WriteString(conn, hdr+"\r\n"); err != nil {
			return
		}
		var w io.Writer = conn
		if chunked {
			cw := httputil.NewChunkedWriter(conn)
			defer cw.Close()
			w = cw
		}
		_, _ = io.CopyBuffer(w, bigBody(size), make([]byte, 64<<10))
	}()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
