package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/twmb/franz-go/pkg/sasl"
)

// AWS_MSK_IAM is Amazon MSK's IAM authentication (aws/aws-msk-iam-auth):
// the client's one SASL message is a JSON object holding a SigV4
// presigned "GET kafka://<broker host>/?Action=kafka-cluster:Connect",
// signed for the service kafka-cluster; the broker checks the signature
// and the IAM policy of the credentials' principal. There is no challenge:
// any non-empty server answer means success.
//
// One signer serves both of the node's Kafka clients: this type is a
// franz-go sasl.Mechanism (the partition readers) and kafkaGoSASL presents
// it to kafka-go (metadata, offsets, the dead-letter producer), so there is
// one payload format to test, not two.
//
// Credentials: the AWS default chain (environment, shared config and
// credentials files, web identity, the ECS task role, the EC2 instance
// profile), loaded once per client. aws.Config.Credentials is an
// aws.CredentialsCache, and Authenticate calls Retrieve on every
// connection (franz-go also calls it again when a broker's session
// lifetime, KIP-368, asks to re-authenticate): the cache hands back the
// same credentials until they are about to expire and fetches new ones
// after that, so a task-role session token that expires is replaced on the
// next connection instead of being reused until the broker refuses it.
//
// Region: the cluster's region, taken from the broker's host name
// (b-1.name.id.c2.kafka.us-east-1.amazonaws.com, or a VPC endpoint's
// vpce-...kafka.us-east-1.vpce.amazonaws.com) because that is where the
// signature is checked; a host that names none (a custom DNS name) uses the
// AWS configuration's region (AWS_REGION, AWS_DEFAULT_REGION, the profile's
// region in ~/.aws/config), which ECS sets for every task.

const (
	mskService   = "kafka-cluster"
	mskAction    = "kafka-cluster:Connect"
	mskVersion   = "2020_10_22"
	mskUserAgent = "floe"
	// mskExpiry is how long the signed payload is valid for, as the Java
	// library's default; it bounds replay of a captured payload, not the
	// session, whose lifetime the broker sets.
	mskExpiry = 15 * time.Minute
	// emptySHA256 is the hex SHA-256 of the empty body: the payload hash
	// of the signed request, as in the Java library.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// ErrMSKRegion: no AWS region for AWS_MSK_IAM, from the broker host or
// the AWS configuration.
var ErrMSKRegion = errors.New("no AWS region for AWS_MSK_IAM")

// mskIAM is the AWS_MSK_IAM mechanism.
type mskIAM struct {
	creds  aws.CredentialsProvider
	region string // the AWS configuration's, for hosts that name none
	signer *v4.Signer
	now    func() time.Time
}

// newMSKIAM loads the AWS default configuration and checks that every
// bootstrap server has a region, from its name or that configuration, so
// a missing region fails start-up rather than every connection.
func newMSKIAM(ctx context.Context, brokers []string) (*mskIAM, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka.sasl.mechanism AWS_MSK_IAM: loading the AWS configuration: %w", err)
	}
	if cfg.Credentials == nil {
		return nil, errors.New("kafka.sasl.mechanism AWS_MSK_IAM: the AWS configuration has no credential provider")
	}
	m := &mskIAM{creds: cfg.Credentials, region: cfg.Region, signer: v4.NewSigner(), now: time.Now}
	for _, b := range brokers {
		host, _, err := net.SplitHostPort(b)
		if err != nil {
			return nil, fmt.Errorf("kafka.bootstrap_servers %q: %w", b, err)
		}
		if _, err := m.regionOf(host); err != nil {
			return nil, fmt.Errorf("kafka.sasl.mechanism AWS_MSK_IAM: %w", err)
		}
	}
	return m, nil
}

func (*mskIAM) Name() string { return "AWS_MSK_IAM" }

// Authenticate signs a fresh payload for the broker at hostport
// (host:port, as franz-go passes it) with credentials retrieved now.
func (m *mskIAM) Authenticate(ctx context.Context, hostport string) (sasl.Session, []byte, error) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, nil, fmt.Errorf("AWS_MSK_IAM for broker %q: %w", hostport, err)
	}
	creds, err := m.creds.Retrieve(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("AWS_MSK_IAM: retrieving AWS credentials for broker %s: %w", host, err)
	}
	payload, err := m.payload(ctx, creds, host)
	if err != nil {
		return nil, nil, fmt.Errorf("AWS_MSK_IAM: signing for broker %s: %w", host, err)
	}
	return mskSession{}, payload, nil
}

// payload is the JSON the broker reads: the presigned URL's query
// parameters with lower-case keys, plus version, host, user-agent.
func (m *mskIAM) payload(ctx context.Context, creds aws.Credentials, host string) ([]byte, error) {
	region, err := m.regionOf(host)
	if err != nil {
		return nil, err
	}
	q := url.Values{"Action": {mskAction}, "X-Amz-Expires": {fmt.Sprint(int(mskExpiry / time.Second))}}
	u := url.URL{Scheme: "kafka", Host: host, Path: "/", RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	signed, _, err := m.signer.PresignHTTP(ctx, creds, req, emptySHA256, mskService, region, m.now().UTC())
	if err != nil {
		return nil, err
	}
	su, err := url.Parse(signed)
	if err != nil {
		return nil, err
	}
	out := map[string]string{"version": mskVersion, "host": host, "user-agent": mskUserAgent}
	for k, vs := range su.Query() {
		out[strings.ToLower(k)] = vs[0]
	}
	return json.Marshal(out)
}

// mskRegion matches MSK broker host names and VPC endpoint names: the
// region is the label before ".amazonaws.com" (or a partition's other
// suffixes), skipping "vpce".
var mskRegion = regexp.MustCompile(`(?:^|\.)([a-z]{2}(?:-[a-z]+)+-\d+)(?:\.vpce)?\.(?:amazonaws\.com(?:\.cn)?|api\.aws|c2s\.ic\.gov|sc2s\.sgov\.gov)\.?$`)

// regionOf is the region to sign for host: the one its name carries,
// else the AWS configuration's.
func (m *mskIAM) regionOf(host string) (string, error) {
	if g := mskRegion.FindStringSubmatch(strings.ToLower(host)); g != nil {
		return g[1], nil
	}
	if m.region != "" {
		return m.region, nil
	}
	return "", fmt.Errorf("%w: broker host %q names none and the AWS configuration has none (set AWS_REGION)", ErrMSKRegion, host)
}

// mskSession ends the exchange at the broker's first answer.
type mskSession struct{}

func (mskSession) Challenge(resp []byte) (bool, []byte, error) {
	if len(resp) == 0 {
		return false, nil, errors.New("AWS_MSK_IAM: empty answer from the broker")
	}
	return true, nil, nil
}
