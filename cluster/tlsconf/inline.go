package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// Inline PEM. A container image without a shell cannot turn a secret into
// files, but ECS (and Kubernetes) can inject a secret into an environment
// variable: Files' CAPEM, CertPEM and KeyPEM carry the material itself.
// It is checked more strictly at Load than the file form, because it can
// never be corrected without a restart: each part must be PEM, the key must
// be the certificate's, the certificate must chain to the CA and carry the
// server name. It is fixed for the life of the Source; rotating it is a
// rolling restart with the new secrets.

// MaterialError: inline PEM refused at Load. Field is the configuration
// key at fault (ca_pem, cert_pem or key_pem); the message never quotes the
// PEM itself.
type MaterialError struct {
	Field string
	Err   error
}

func (e *MaterialError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *MaterialError) Unwrap() error { return e.Err }

// inline reports whether any PEM is given inline.
func (f Files) inline() bool { return len(f.CAPEM) > 0 || len(f.CertPEM) > 0 || len(f.KeyPEM) > 0 }

// readInline checks and loads the inline material.
func readInline(f Files) (*material, error) {
	bad := func(field, format string, args ...any) error {
		return &MaterialError{Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrMaterial}, args...)...)}
	}
	cas, err := certificates(f.CAPEM)
	if err != nil {
		return nil, bad("ca_pem", "%w", err)
	}
	pool := x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	chain, err := certificates(f.CertPEM)
	if err != nil {
		return nil, bad("cert_pem", "%w", err)
	}
	if b, _ := pem.Decode(f.KeyPEM); b == nil || b.Type == "CERTIFICATE" {
		return nil, bad("key_pem", "no PEM private key block")
	}
	cert, err := tls.X509KeyPair(f.CertPEM, f.KeyPEM)
	if err != nil {
		// The tls errors name what failed, never the key's bytes.
		return nil, bad("key_pem", "not the private key of cert_pem: %w", err)
	}
	leaf := chain[0]
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, bad("cert_pem", "certificate %q (issuer %q) is not signed by ca_pem: %w", leaf.Subject.CommonName, leaf.Issuer.CommonName, err)
	}
	if err := leaf.VerifyHostname(f.ServerName); err != nil {
		return nil, bad("cert_pem", "certificate %q lacks the server name SAN %s (server_name) that every peer expects; it has %v "+
			"(floe tls cert create --server-name %s)", leaf.Subject.CommonName, f.ServerName, leaf.DNSNames, f.ServerName)
	}
	for _, u := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if !hasUsage(leaf, u) {
			return nil, bad("cert_pem", "certificate %q is not for both ends of a connection (server and client auth)", leaf.Subject.CommonName)
		}
	}
	cert.Leaf = leaf
	return &material{cert: cert, pool: pool}, nil
}

// certificates parses every PEM block of data, all of which must be
// certificates, and at least one.
func certificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("a PEM %s block where certificates were expected", b.Type)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing certificate %d: %w", len(out)+1, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block (an empty value, or not PEM)")
	}
	return out, nil
}

// hasUsage: no extended key usage allows any.
func hasUsage(c *x509.Certificate, u x509.ExtKeyUsage) bool {
	if len(c.ExtKeyUsage) == 0 {
		return true
	}
	for _, have := range c.ExtKeyUsage {
		if have == u || have == x509.ExtKeyUsageAny {
			return true
		}
	}
	return false
}
