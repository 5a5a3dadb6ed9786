package source

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/floe-io/floe/internal/config"
	kafkasasl "github.com/segmentio/kafka-go/sasl"
)

// The signature is recomputed here by hand from the SigV4 specification
// (docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html),
// not with the SDK signer the mechanism uses, so a payload signed for the
// wrong region, service, time, host or query fails.

const (
	testAKID   = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testToken  = "IQoJb3JpZ2lu/ZXIQ+abc=="
)

var testNow = time.Date(2026, 12, 2, 7, 30, 5, 0, time.UTC)

// uriEncode is SigV4's UriEncode: every byte but A-Z a-z 0-9 - _ . ~ as
// %XX in upper case.
func uriEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func hmacSHA256(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return h.Sum(nil)
}

// expectedSignature signs the query params (without the signature) of
// a presigned GET kafka://host/ for region, as the broker checks it.
func expectedSignature(params map[string]string, host, region, secret string) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var q []string
	for _, k := range keys {
		q = append(q, uriEncode(k)+"="+uriEncode(params[k]))
	}
	canonical := "GET\n/\n" + strings.Join(q, "&") + "\nhost:" + host + "\n\nhost\n" + emptySHA256
	sum := sha256.Sum256([]byte(canonical))
	amzDate := params["X-Amz-Date"]
	scope := amzDate[:8] + "/" + region + "/kafka-cluster/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	k := hmacSHA256([]byte("AWS4"+secret), amzDate[:8])
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, "kafka-cluster")
	k = hmacSHA256(k, "aws4_request")
	return hex.EncodeToString(hmacSHA256(k, toSign))
}

func testMechanism(region string, p aws.CredentialsProvider) *mskIAM {
	return &mskIAM{creds: p, region: region, signer: v4.NewSigner(), now: func() time.Time { return testNow }}
}

// TestMSKIAMPayload: the payload both clients send is the JSON the MSK
// broker reads, with a signature that verifies.
func TestMSKIAMPayload(t *testing.T) {
	cases := []struct {
		name, broker, cfgRegion, region string
		token                           string
	}{
		{"msk broker", "b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com:9098", "", "us-east-1", testToken},
		{"host beats config", "b-2.demo.abc123.c3.kafka.eu-west-1.amazonaws.com:9098", "us-west-2", "eu-west-1", testToken},
		{"vpc endpoint", "vpce-0a1b-x2y3.kafka.ap-southeast-2.vpce.amazonaws.com:9098", "", "ap-southeast-2", ""},
		{"custom name uses config", "kafka.internal.example:9098", "ca-central-1", "ca-central-1", testToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			creds := aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: c.token}
			m := testMechanism(c.cfgRegion, credentials(creds))
			_, franzPayload, err := m.Authenticate(context.Background(), c.broker)
			if err != nil {
				t.Fatal(err)
			}
			host, port, _ := net.SplitHostPort(c.broker)
			portN, _ := strconv.Atoi(port)
			ctx := kafkasasl.WithMetadata(context.Background(), &kafkasasl.Metadata{Host: host, Port: portN})
			_, kgoPayload, err := kafkaGoSASL{m}.Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if string(kgoPayload) != string(franzPayload) {
				t.Fatalf("kafka-go sends %s, franz-go %s", kgoPayload, franzPayload)
			}
			checkPayload(t, franzPayload, host, c.region, c.token)
		})
	}
}

func checkPayload(t *testing.T, payload []byte, host, region, token string) {
	t.Helper()
	var got map[string]string
	if err := json.Unmarshal(payload, &got); err != nil {
		t.Fatalf("payload %s: %v", payload, err)
	}
	want := map[string]string{
		"version":              "2020_10_22",
		"host":                 host,
		"user-agent":           "floe",
		"action":               "kafka-cluster:Connect",
		"x-amz-algorithm":      "AWS4-HMAC-SHA256",
		"x-amz-credential":     testAKID + "/20261202/" + region + "/kafka-cluster/aws4_request",
		"x-amz-date":           "20261202T073005Z",
		"x-amz-expires":        "900",
		"x-amz-signedheaders":  "host",
		"x-amz-security-token": token,
	}
	if token == "" {
		delete(want, "x-amz-security-token")
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && k != "x-amz-signature" {
			t.Errorf("unexpected field %s=%q", k, got[k])
		}
	}
	// The signed query holds the parameters in their canonical case.
	params := map[string]string{
		"Action": got["action"], "X-Amz-Algorithm": got["x-amz-algorithm"], "X-Amz-Credential": got["x-amz-credential"],
		"X-Amz-Date": got["x-amz-date"], "X-Amz-Expires": got["x-amz-expires"], "X-Amz-SignedHeaders": got["x-amz-signedheaders"],
	}
	if token != "" {
		params["X-Amz-Security-Token"] = token
	}
	if sig := expectedSignature(params, host, region, testSecret); got["x-amz-signature"] != sig {
		t.Errorf("x-amz-signature = %s, recomputed %s", got["x-amz-signature"], sig)
	}
}

type credentials aws.Credentials

func (c credentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials(c), nil
}

// rotating hands out a new session token on each fetch, valid for ttl.
type rotating struct {
	fetches atomic.Int32
	ttl     time.Duration
}

func (r *rotating) Retrieve(context.Context) (aws.Credentials, error) {
	n := r.fetches.Add(1)
	return aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: fmt.Sprintf("token-%d", n),
		CanExpire: true, Expires: time.Now().Add(r.ttl)}, nil
}

// TestMSKIAMCredentialRefresh: each connection retrieves credentials from
// the chain's cache (what aws.Config holds), so an expired session token
// is replaced on the next connection and a valid one is reused.
func TestMSKIAMCredentialRefresh(t *testing.T) {
	cases := []struct {
		name        string
		ttl         time.Duration
		wantFetches int32
		wantTokens  []string
	}{
		{"expired tokens are fetched again", -time.Minute, 3, []string{"token-1", "token-2", "token-3"}},
		{"valid token is reused", time.Hour, 1, []string{"token-1", "token-1", "token-1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := &rotating{ttl: c.ttl}
			m := testMechanism("", aws.NewCredentialsCache(src))
			for i, want := range c.wantTokens {
				_, p, err := m.Authenticate(context.Background(), "b-1.x.c1.kafka.us-east-1.amazonaws.com:9098")
				if err != nil {
					t.Fatal(err)
				}
				var got map[string]string
				if err := json.Unmarshal(p, &got); err != nil {
					t.Fatal(err)
				}
				if got["x-amz-security-token"] != want {
					t.Fatalf("connection %d signed with %q, want %q", i, got["x-amz-security-token"], want)
				}
			}
			if n := src.fetches.Load(); n != c.wantFetches {
				t.Fatalf("%d fetches, want %d", n, c.wantFetches)
			}
		})
	}
}

// TestMSKIAMRegionAtStart: a bootstrap server whose name carries no region
// needs one in the AWS configuration, checked when the client is built.
func TestMSKIAMRegionAtStart(t *testing.T) {
	cases := []struct {
		name, broker, envRegion string
		wantErr                 error
	}{
		{"msk host", "b-1.demo.abc.c2.kafka.eu-north-1.amazonaws.com:9098", "", nil},
		{"custom host, AWS_REGION", "kafka.internal:9098", "eu-central-1", nil},
		{"custom host, no region", "kafka.internal:9098", "", ErrMSKRegion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
			t.Setenv("AWS_PROFILE", "")
			t.Setenv("AWS_DEFAULT_REGION", "")
			t.Setenv("AWS_REGION", c.envRegion)
			m, err := newMSKIAM(context.Background(), []string{c.broker})
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if err == nil && m.region != c.envRegion {
				t.Fatalf("region %q, want %q", m.region, c.envRegion)
			}
		})
	}
}

// TestMSKIAMRegionOf: the region is the label before the AWS suffix in
// every MSK host form; a host without one falls back to the configuration.
func TestMSKIAMRegionOf(t *testing.T) {
	cases := []struct{ host, cfg, want string }{
		{"b-3.demo.abc123.c11.kafka.us-gov-west-1.amazonaws.com", "", "us-gov-west-1"},
		{"boot-ab12cd.c3.kafka-serverless.eu-central-1.amazonaws.com", "", "eu-central-1"},
		{"b-1.demo.abc.c2.kafka.cn-north-1.amazonaws.com.cn", "", "cn-north-1"},
		{"B-1.Demo.ABC.c2.Kafka.AP-South-1.AmazonAWS.com.", "", "ap-south-1"},
		{"vpce-0a1b-x2y3.kafka.sa-east-1.vpce.amazonaws.com", "us-east-1", "sa-east-1"},
		{"kafka.us-east-1.example.com", "eu-west-3", "eu-west-3"},
		{"127.0.0.1", "eu-west-3", "eu-west-3"},
		{"127.0.0.1", "", ""},
	}
	for _, c := range cases {
		t.Run(c.host+"/"+c.cfg, func(t *testing.T) {
			got, err := testMechanism(c.cfg, nil).regionOf(c.host)
			if c.want == "" {
				if !errors.Is(err, ErrMSKRegion) {
					t.Fatalf("region %q, err %v; want ErrMSKRegion", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("region %q, err %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestKafkaAuthMechanisms: both libraries get the configured mechanism,
// and with AWS_MSK_IAM kafka-go's is the very signer franz-go uses.
func TestKafkaAuthMechanisms(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	cases := []struct{ mech, want string }{
		{"", ""},
		{"plain", "PLAIN"},
		{"SCRAM-SHA-512", "SCRAM-SHA-512"},
		{"aws_msk_iam", "AWS_MSK_IAM"},
	}
	for _, c := range cases {
		t.Run(c.mech, func(t *testing.T) {
			cfg := config.Kafka{BootstrapServers: []string{"b-1.x.c2.kafka.eu-west-1.amazonaws.com:9098"},
				SASL: config.SASL{Mechanism: c.mech, Username: "u", Password: "p"}}
			a, err := newKafkaAuth(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if a.franz != nil || a.kafkaGo != nil {
					t.Fatalf("no mechanism configured, got %v and %v", a.franz, a.kafkaGo)
				}
				return
			}
			if a.franz == nil || a.kafkaGo == nil || a.franz.Name() != c.want || a.kafkaGo.Name() != c.want {
				t.Fatalf("mechanisms %v, %v; want %s for both", a.franz, a.kafkaGo, c.want)
			}
			if c.want == "AWS_MSK_IAM" {
				if b, ok := a.kafkaGo.(kafkaGoSASL); !ok || b.m != a.franz {
					t.Fatalf("kafka-go's AWS_MSK_IAM is %#v, not franz-go's signer", a.kafkaGo)
				}
			}
		})
	}
}
