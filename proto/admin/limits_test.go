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
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/floe-io/floe/internal/testing/rss"
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

// maxRSS is issue 17's promise: a node refusing oversized input stays
// under 1 GiB of resident memory.
const maxRSS = 1 << 30

// TestBodyLimits sends oversized bodies to the HTTP gateway: without a
// token the answer is 401 and the body is not read (the heap does not grow
// by its size, and the process's resident memory stays under 1 GiB and
// grows by far less than the body); with a token a body over the cap
// answers 413 naming the limit, with or without a Content-Length; the
// backend never sees either.
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
			var code int
			var body []byte
			res := rss.Measure(t, func() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				// The client streams the body from a 64 KiB buffer, so what
				// the process holds is the server's.
				code, body = rawPost(t, s.Addr(), "/v1/mappings", tc.token, tc.size, tc.chunked)
				runtime.ReadMemStats(&after)
			})
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
			checkRSS(t, res, tc.size)
			if c := f.lastCall(); c != "" {
				t.Errorf("backend called: %s", c)
			}
		})
	}
}

// checkRSS: the process stayed under maxRSS while refusing input of size
// bytes, and grew by less than half of it (so the input was not held).
func checkRSS(t *testing.T, res rss.Result, size int64) {
	t.Helper()
	t.Logf("refusing %d MiB: %v", size>>20, res)
	if res.Peak >= maxRSS {
		t.Errorf("resident memory peaked at %d MiB refusing %d bytes, over 1 GiB", res.Peak>>20, size)
	}
	if size >= 64<<20 && res.Growth() > size/2 {
		t.Errorf("resident memory grew by %d MiB refusing %d MiB: the input was held", res.Growth()>>20, size>>20)
	}
}

// TestGRPCMessageLimit: a gRPC message over the cap (the default, which is
// gRPC's own, or a set one) is refused with ResourceExhausted naming it,
// before any handler runs. The client runs in a child process (the test
// binary, TestGRPCMessageLimitClient), so that the 100 MB message it
// builds is not counted in the server's resident memory, which stays
// under 1 GiB.
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
			var out []byte
			res := rss.Measure(t, func() {
				cmd := exec.Command(os.Args[0], "-test.run=^TestGRPCMessageLimitClient$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), clientAddrEnv+"="+s.Addr(), fmt.Sprintf("%s=%d", clientSizeEnv, tc.size))
				var err error
				if out, err = cmd.CombinedOutput(); err != nil {
					t.Fatalf("client process: %v\n%s", err, out)
				}
			})
			got := regexp.MustCompile(`grpc result: (.*)`).FindSubmatch(out)
			if got == nil || !strings.Contains(string(got[1]), codes.ResourceExhausted.String()) || !strings.Contains(string(got[1]), tc.want) {
				t.Fatalf("CreateMapping with a %d-byte namespace: %q, want ResourceExhausted naming %s\n%s", tc.size, got, tc.want, out)
			}
			checkRSS(t, res, int64(tc.size))
			if c := f.lastCall(); c != "" {
				t.Errorf("backend called: %s", c)
			}
		})
	}
}

// The child process of TestGRPCMessageLimit reads the server's address and
// the namespace's size from these.
const (
	clientAddrEnv = "FLOE_TEST_GRPC_CLIENT_ADDR"
	clientSizeEnv = "FLOE_TEST_GRPC_CLIENT_SIZE"
)

// TestGRPCMessageLimitClient is the client half of TestGRPCMessageLimit,
// run by it in a child process; it prints the call's error.
func TestGRPCMessageLimitClient(t *testing.T) {
	addr := os.Getenv(clientAddrEnv)
	if addr == "" {
		t.Skip("the client half of TestGRPCMessageLimit, run by it in a child process")
	}
	size, err := strconv.Atoi(os.Getenv(clientSizeEnv))
	if err != nil {
		t.Fatal(err)
	}
	client := adminv1.NewTableServiceClient(dialGRPC(t, addr))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+adminToken)
	_, err = client.CreateMapping(ctx, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m", Topic: "t", Namespace: strings.Repeat("n", size)}})
	fmt.Printf("grpc result: %s %v\n", status.Code(err), err)
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
