package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
)

// ServerConfig returns the configuration for accepting connections: TLS 1.2
// or later, this node's current certificate and, with VerifyIncoming, a
// client certificate required, signed by the current CA and carrying the
// server name. alpn lists the application protocols offered (gRPC: h2).
func (s *Source) ServerConfig(alpn ...string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: alpn,
		// Per connection, so each handshake sees the files as they are now.
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			m := s.current()
			c := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: alpn, Certificates: []tls.Certificate{m.cert}}
			if s.files.VerifyIncoming {
				// Requested, not required, so that a missing certificate
				// fails in verify with an error that says so.
				c.ClientAuth = tls.RequestClientCert
				c.VerifyConnection = func(cs tls.ConnectionState) error {
					return s.verify(m.pool, cs.PeerCertificates, x509.ExtKeyUsageClientAuth)
				}
			}
			return c, nil
		},
	}
}

// ClientConfig returns the configuration for dialing a peer: TLS 1.2 or
// later, this node's current certificate, and the peer's certificate
// checked against the current CA and the server name.
func (s *Source) ClientConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The standard check would pin the CA pool read when this config
		// was made (gRPC keeps one for the life of the process);
		// VerifyConnection below does the same check with the pool as it
		// is at each handshake.
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			m := s.current()
			return &m.cert, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			return s.verify(s.current().pool, cs.PeerCertificates, x509.ExtKeyUsageServerAuth)
		},
	}
}

// verify checks a peer's chain against pool, for usage, naming the server
// name.
func (s *Source) verify(pool *x509.CertPool, chain []*x509.Certificate, usage x509.ExtKeyUsage) error {
	if len(chain) == 0 {
		return ErrNoPeerCert
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		Roots: pool, Intermediates: inter, DNSName: s.files.ServerName, KeyUsages: []x509.ExtKeyUsage{usage},
	})
	if err != nil {
		return fmt.Errorf("%w (subject %q, want SAN %s signed by the cluster CA): %w", ErrPeerCert, chain[0].Subject.String(), s.files.ServerName, err)
	}
	return nil
}
