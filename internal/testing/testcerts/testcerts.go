// Package testcerts makes certificates for tests of TLS and mutual TLS: a
// CA, leaves it signs, and their PEM files. Test code only.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// Pair is a certificate with its key.
type Pair struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	DER  []byte
}

var serial atomic.Int64

// New signs tmpl with parent (self-signed when parent is nil), filling the
// serial number and a validity of one hour either side of now.
func New(t testing.TB, parent *Pair, tmpl *x509.Certificate) *Pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano() + serial.Add(1))
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Pair{Cert: cert, Key: key, DER: der}
}

// CA returns a self-signed certificate authority.
func CA(t testing.TB) *Pair {
	return New(t, nil, &x509.Certificate{Subject: pkix.Name{CommonName: "floe test CA"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature})
}

// Leaf returns a certificate for 127.0.0.1 signed by ca with the given
// extended key usages.
func Leaf(t testing.TB, ca *Pair, name string, usage ...x509.ExtKeyUsage) *Pair {
	return New(t, ca, &x509.Certificate{Subject: pkix.Name{CommonName: name}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: usage, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}})
}

// Files writes the certificate and key as PEM files name.pem and
// name-key.pem in dir.
func (p *Pair) Files(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	kb, err := x509.MarshalPKCS8PrivateKey(p.Key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.DER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TLS returns the pair as a tls.Certificate.
func (p *Pair) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{p.DER}, PrivateKey: p.Key}
}

// Pool returns a pool holding the pair's certificate (for a CA).
func (p *Pair) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.Cert)
	return pool
}
