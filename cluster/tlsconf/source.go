package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// DefaultServerName is the name every node certificate carries and every
// node expects of its peers when cluster.tls.server_name is not set (as
// Consul's server.<dc>.consul): one name for the whole cluster, so a
// certificate signed by the CA for anything else (an admin client) cannot
// speak on the internal ports.
const DefaultServerName = "server.floe"

// Files names the PEM files of a node's internal TLS, or holds the PEM
// itself (inline.go): one form or the other.
type Files struct {
	CAFile, CertFile, KeyFile string
	// CAPEM, CertPEM, KeyPEM: the material inline, fixed for the process
	// life; when any is set the file names are not used.
	CAPEM, CertPEM, KeyPEM []byte
	// ServerName is the SAN a peer's certificate must carry (both ways).
	ServerName string
	// VerifyIncoming: incoming connections must present a certificate
	// signed by the CA carrying ServerName. Off, only the server side of
	// each connection is authenticated.
	VerifyIncoming bool
}

// material is one reading of the files.
type material struct {
	cert  tls.Certificate
	pool  *x509.CertPool
	stamp [3]fileStamp
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// Source hands out the current certificate and CA pool, re-reading the
// files on the first handshake after any of them changed (inline PEM is
// never re-read). A change that does not load (a key written after its
// certificate) keeps the previous material until the files agree again.
type Source struct {
	files Files
	log   *slog.Logger

	// fixed: the material came inline and is never re-read.
	fixed bool

	mu      sync.Mutex
	cur     *material
	badSeen [3]fileStamp // stamps of the last reading that failed, logged once
}

// Load reads the files once; an error names the file at fault.
func Load(f Files, log *slog.Logger) (*Source, error) {
	if f.ServerName == "" {
		f.ServerName = DefaultServerName
	}
	if log == nil {
		log = slog.Default()
	}
	if f.inline() {
		m, err := readInline(f)
		if err != nil {
			return nil, err
		}
		return &Source{files: f, log: log, cur: m, fixed: true}, nil
	}
	st, err := stamps(f)
	if err != nil {
		return nil, err
	}
	m, err := read(f, st)
	if err != nil {
		return nil, err
	}
	return &Source{files: f, log: log, cur: m}, nil
}

// ServerName returns the SAN peers must carry.
func (s *Source) ServerName() string { return s.files.ServerName }

func stamps(f Files) ([3]fileStamp, error) {
	var out [3]fileStamp
	for i, p := range []string{f.CAFile, f.CertFile, f.KeyFile} {
		fi, err := os.Stat(p)
		if err != nil {
			return out, fmt.Errorf("reading internal tls file: %w", err)
		}
		out[i] = fileStamp{mod: fi.ModTime(), size: fi.Size()}
	}
	return out, nil
}

func read(f Files, st [3]fileStamp) (*material, error) {
	caPEM, err := os.ReadFile(f.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading internal tls ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("internal tls ca_file %s: no PEM certificate in it", f.CAFile)
	}
	cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading internal tls cert_file %s with key_file %s: %w", f.CertFile, f.KeyFile, err)
	}
	return &material{cert: cert, pool: pool, stamp: st}, nil
}

// current returns the material, re-read if a file changed since.
func (s *Source) current() *material {
	if s.fixed {
		return s.cur // never replaced: no lock needed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := stamps(s.files)
	if err != nil || st == s.cur.stamp {
		if err != nil && st != s.badSeen {
			s.badSeen = st
			s.log.Warn("internal tls files unreadable; keeping the loaded certificates", "err", err)
		}
		return s.cur
	}
	m, err := read(s.files, st)
	if err != nil {
		if st != s.badSeen {
			s.badSeen = st
			s.log.Warn("internal tls files changed but do not load; keeping the loaded certificates", "err", err)
		}
		return s.cur
	}
	s.cur = m
	s.log.Info("internal tls certificates reloaded", "cert_file", s.files.CertFile, "not_after", m.cert.Leaf.NotAfter)
	return m
}
