package restsync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/floe-io/floe/sinks/sink"
)

// The AWS Signature Version 4 test suite's credentials, time and scope
// (docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html).
var (
	suiteCreds = credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "")
	suiteTime  = time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
)

// TestSigV4TestVectors: the signing the mirror does gives the test suite's
// published signatures for get-vanilla and post-vanilla.
func TestSigV4TestVectors(t *testing.T) {
	s := &SigV4{Service: "service", Region: "us-east-1", Credentials: suiteCreds, now: func() time.Time { return suiteTime }}
	for _, tc := range []struct{ method, sig string }{
		{http.MethodGet, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
		{http.MethodPost, "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
	} {
		req, err := http.NewRequest(tc.method, "https://example.amazonaws.com/", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.sign(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + tc.sig
		if got := req.Header.Get("Authorization"); got != want {
			t.Errorf("%s-vanilla:\n got %s\nwant %s", strings.ToLower(tc.method), got, want)
		}
		if req.Header.Get("X-Amz-Date") != "20150830T123600Z" {
			t.Errorf("%s: X-Amz-Date %q", tc.method, req.Header.Get("X-Amz-Date"))
		}
	}
}

// sigV4Verifier stands in front of the fake catalog as AWS does: it signs
// the request it received again, from the headers the signature names, the
// body and the time in X-Amz-Date, and answers 403 unless the signatures
// agree and the scope is service in region; then it lets the request
// through as the fake's bearer.
type sigV4Verifier struct {
	next            http.Handler
	service, region string
	creds           aws.CredentialsProvider
	verified        int
}

func (v *sigV4Verifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get("Authorization")
	body, _ := io.ReadAll(r.Body)
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || !strings.Contains(got, "/"+v.region+"/"+v.service+"/aws4_request") {
		http.Error(w, `{"error":{"message":"bad signature scope","type":"ForbiddenException","code":403}}`, http.StatusForbidden)
		return
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if i := strings.Index(got, "SignedHeaders="); i >= 0 {
		for _, h := range strings.Split(strings.SplitN(got[i+len("SignedHeaders="):], ",", 2)[0], ";") {
			if h != "host" && h != "x-amz-date" {
				again.Header.Set(h, r.Header.Get(h))
			}
		}
	}
	sum := sha256.Sum256(body)
	creds, _ := v.creds.Retrieve(r.Context())
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, again, hex.EncodeToString(sum[:]), v.service, v.region, at); err != nil || again.Header.Get("Authorization") != got {
		http.Error(w, `{"error":{"message":"signature does not match","type":"ForbiddenException","code":403}}`, http.StatusForbidden)
		return
	}
	v.verified++
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer tok")
	v.next.ServeHTTP(w, r)
}

// TestSyncSigned: a mirror with SigV4 registers and moves a table through a
// catalog that checks every request's signature over its body; signed for
// another service, or with other credentials, it is refused as an
// authorization failure.
func TestSyncSigned(t *testing.T) {
	fake := &fakeREST{t: t, overwrite: true, ns: map[string]bool{}, tables: map[string]string{}}
	v := &sigV4Verifier{next: fake, service: "glue", region: "eu-west-1",
		creds: credentials.NewStaticCredentialsProvider("AKIDFLOE", "secret", "session")}
	srv := httptest.NewServer(v)
	defer srv.Close()
	dir := t.TempDir()
	m0, m1 := writeMetadata(t, dir, "00000"), writeMetadata(t, dir, "00001")
	s := New(Config{Name: "glue-rest", URI: srv.URL, Warehouse: "123456789012",
		SigV4: &SigV4{Service: "glue", Region: "eu-west-1", Credentials: v.creds}}, nil)
	ctx := context.Background()
	st := sink.SyncTable{Key: "shop\x1forders", Ident: []string{"shop", "orders"}}
	for _, loc := range []string{m0, m1} {
		st.MetadataLocation = loc
		if err := s.Sync(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if got := fake.location("shop/orders"); got != m1 || v.verified < 4 {
		t.Fatalf("mirror at %q after %d verified requests, want %s", got, v.verified, m1)
	}
	for name, sig := range map[string]*SigV4{
		"another service":       {Service: "s3tables", Region: "eu-west-1", Credentials: v.creds},
		"another secret":        {Service: "glue", Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDFLOE", "wrong", "session")},
		"no credentials at all": {Service: "glue", Region: "eu-west-1", Credentials: aws.AnonymousCredentials{}},
	} {
		err := New(Config{Name: "r", URI: srv.URL, SigV4: sig}, nil).Sync(ctx, st)
		if err == nil || (name != "no credentials at all" && !errors.Is(err, ErrAuth)) {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
}
