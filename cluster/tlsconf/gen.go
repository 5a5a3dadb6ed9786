package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Default validities: a CA outlives several rounds of node certificates
// (as consul tls: 5 years and 1 year).
const (
	DefaultCAValidity   = 5 * 365 * 24 * time.Hour
	DefaultCertValidity = 365 * 24 * time.Hour
)

// CertRequest describes a node certificate.
type CertRequest struct {
	NodeID     string
	ServerName string // default DefaultServerName
	DNSNames   []string
	IPs        []net.IP
	Validity   time.Duration // default DefaultCertValidity
}

// PEMPair is a certificate and its PKCS#8 key, PEM encoded.
type PEMPair struct{ Cert, Key []byte }

// NewCA makes a self-signed ECDSA P-256 certificate authority.
func NewCA(name string, validity time.Duration) (PEMPair, error) {
	if validity <= 0 {
		validity = DefaultCAValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PEMPair{}, fmt.Errorf("generating ca key: %w", err)
	}
	tmpl, err := template(name, validity, key)
	if err != nil {
		return PEMPair{}, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.MaxPathLenZero = true, true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	return sign(tmpl, tmpl, key, key)
}

// NewCert makes a node certificate signed by ca, for both ends of an
// internal connection, with SANs: the server name, the node id, localhost,
// 127.0.0.1 and the request's extra names and addresses.
func NewCert(ca PEMPair, req CertRequest) (PEMPair, error) {
	if req.NodeID == "" {
		return PEMPair{}, errors.New("node certificate: node id is empty")
	}
	if req.ServerName == "" {
		req.ServerName = DefaultServerName
	}
	if req.Validity <= 0 {
		req.Validity = DefaultCertValidity
	}
	caCert, caKey, err := parsePair(ca)
	if err != nil {
		return PEMPair{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PEMPair{}, fmt.Errorf("generating node key: %w", err)
	}
	tmpl, err := template(req.NodeID, req.Validity, key)
	if err != nil {
		return PEMPair{}, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.DNSNames = append([]string{req.ServerName, req.NodeID, "localhost"}, req.DNSNames...)
	tmpl.IPAddresses = append([]net.IP{net.IPv4(127, 0, 0, 1)}, req.IPs...)
	if tmpl.NotAfter.After(caCert.NotAfter) {
		tmpl.NotAfter = caCert.NotAfter // a leaf outliving its CA fails verification anyway
	}
	return sign(tmpl, caCert, key, caKey)
}

func template(cn string, validity time.Duration, key *ecdsa.PrivateKey) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("drawing a serial number: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encoding public key: %w", err)
	}
	ski := sha256.Sum256(pub)
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn, Organization: []string{"floe"}},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(validity), SubjectKeyId: ski[:20],
	}, nil
}

// sign signs tmpl (for key) with parent's signer and returns it with key.
func sign(tmpl, parent *x509.Certificate, key, signer *ecdsa.PrivateKey) (PEMPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return PEMPair{}, fmt.Errorf("signing certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return PEMPair{}, err
	}
	return PEMPair{Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Key: kp}, nil
}

func parsePair(p PEMPair) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, _ := pem.Decode(p.Cert)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, nil, errors.New("ca certificate: no PEM CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing ca certificate: %w", err)
	}
	kb, _ := pem.Decode(p.Key)
	if kb == nil {
		return nil, nil, errors.New("ca key: no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		if k, err = x509.ParseECPrivateKey(kb.Bytes); err != nil {
			return nil, nil, fmt.Errorf("parsing ca key: %w", err)
		}
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || !ek.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, errors.New("ca key: not the ECDSA key of the ca certificate")
	}
	return cert, ek, nil
}

// WriteFiles writes the pair to dir as name.pem and name-key.pem (the key
// readable by its owner only), refusing to overwrite either.
func (p PEMPair) WriteFiles(dir, name string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	for _, f := range []string{certFile, keyFile} {
		if _, err := os.Stat(f); err == nil {
			return "", "", fmt.Errorf("%s: %w", f, ErrExists)
		}
	}
	if err := os.WriteFile(keyFile, p.Key, 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", keyFile, err)
	}
	if err := os.WriteFile(certFile, p.Cert, 0o644); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", certFile, err)
	}
	return certFile, keyFile, nil
}

// ReadPair reads a pair written by WriteFiles.
func ReadPair(certFile, keyFile string) (PEMPair, error) {
	c, err := os.ReadFile(certFile)
	if err != nil {
		return PEMPair{}, fmt.Errorf("reading ca certificate: %w", err)
	}
	k, err := os.ReadFile(keyFile)
	if err != nil {
		return PEMPair{}, fmt.Errorf("reading ca key: %w", err)
	}
	return PEMPair{Cert: c, Key: k}, nil
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	b, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("encoding key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b}), nil
}
