package restsync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigV4 signs every request with AWS Signature Version 4, as Glue's Iceberg
// REST endpoint (https://glue.<region>.amazonaws.com/iceberg, signing name
// glue) and S3 Tables' (https://s3tables.<region>.amazonaws.com/iceberg,
// s3tables) require, instead of sending a bearer token.
type SigV4 struct {
	// Service is the signing name: glue or s3tables.
	Service string
	Region  string
	// Credentials are the AWS SDK's: the default chain (environment,
	// shared config, web identity, the ECS task role, EC2 instance
	// metadata) as cmd wires it.
	Credentials aws.CredentialsProvider
	// now is the signing time; nil is time.Now (tests fix it).
	now func() time.Time
}

// sign adds the X-Amz-Date, X-Amz-Security-Token (for temporary
// credentials) and Authorization headers of a SigV4 signature over the
// method, path, query, host and body of req. The body is read and put back.
func (s *SigV4) sign(ctx context.Context, req *http.Request) error {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return fmt.Errorf("signing: reading the body: %w", err)
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	sum := sha256.Sum256(body)
	creds, err := s.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("signing for %s in %s: retrieving AWS credentials: %w", s.Service, s.Region, err)
	}
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), s.Service, s.Region, now()); err != nil {
		return fmt.Errorf("signing for %s in %s: %w", s.Service, s.Region, err)
	}
	return nil
}
