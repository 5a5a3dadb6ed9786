package raftnode

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/floe-io/floe/cluster/tlsconf"
)

// handshakeTimeout bounds an incoming TLS handshake, so that a peer that
// connects and says nothing does not hold a connection.
const handshakeTimeout = 10 * time.Second

// rpcServerCreds returns the internal RPC's server credentials: mutual TLS
// from src, each refused handshake logged with the peer's address; or
// plaintext when src is nil.
func rpcServerCreds(src *tlsconf.Source, log *slog.Logger) credentials.TransportCredentials {
	if src == nil {
		return insecure.NewCredentials()
	}
	return loggedCreds{TransportCredentials: credentials.NewTLS(src.ServerConfig("h2")), log: log}
}

// rpcClientCreds returns the credentials this node dials peers with.
func rpcClientCreds(src *tlsconf.Source) credentials.TransportCredentials {
	if src == nil {
		return insecure.NewCredentials()
	}
	return credentials.NewTLS(src.ClientConfig())
}

// loggedCreds logs a refused incoming handshake (no certificate, another
// CA, another name, plaintext, an old TLS version) with the peer's address:
// gRPC would only log it at its own verbosity.
type loggedCreds struct {
	credentials.TransportCredentials
	log *slog.Logger
}

func (c loggedCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.log.Warn("internal rpc connection refused", "peer", conn.RemoteAddr().String(), "err", err)
	}
	return out, info, err
}

func (c loggedCreds) Clone() credentials.TransportCredentials {
	return loggedCreds{TransportCredentials: c.TransportCredentials.Clone(), log: c.log}
}

// tlsStreamLayer is a raft.StreamLayer over mutual TLS: raft's
// NetworkTransport then speaks its protocol inside it.
type tlsStreamLayer struct {
	ln     net.Listener
	adv    net.Addr
	server *tls.Config
	client *tls.Config
	log    *slog.Logger
}

func newTLSStreamLayer(bind string, adv net.Addr, src *tlsconf.Source, log *slog.Logger) (*tlsStreamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("listening for raft on %s: %w", bind, err)
	}
	if adv == nil {
		adv = ln.Addr()
	}
	if a, ok := adv.(*net.TCPAddr); !ok || a.IP == nil || a.IP.IsUnspecified() {
		_ = ln.Close()
		// As raft's TCP transport: peers cannot dial 0.0.0.0.
		return nil, fmt.Errorf("raft advertise address %s: not one peers can dial (set node.advertise_addr)", adv)
	}
	return &tlsStreamLayer{ln: ln, adv: adv, server: src.ServerConfig(), client: src.ClientConfig(), log: log}, nil
}

// Accept returns the next connection; its handshake runs on its first
// read, in raft's goroutine for that connection, not here, so that one
// slow peer does not hold up the others.
func (s *tlsStreamLayer) Accept() (net.Conn, error) {
	c, err := s.ln.Accept()
	if err != nil {
		return nil, err
	}
	return &serverConn{Conn: tls.Server(c, s.server), log: s.log}, nil
}

func (s *tlsStreamLayer) Close() error   { return s.ln.Close() }
func (s *tlsStreamLayer) Addr() net.Addr { return s.adv }

func (s *tlsStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: s.client}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", string(addr))
	if err != nil {
		return nil, fmt.Errorf("dialing raft peer %s: %w", addr, err)
	}
	return c, nil
}

// serverConn is an accepted Raft connection that completes (or refuses,
// logging the peer) its TLS handshake before the first byte is read.
type serverConn struct {
	*tls.Conn
	log  *slog.Logger
	once sync.Once
	err  error
}

func (c *serverConn) Read(p []byte) (int, error) {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
		defer cancel()
		if c.err = c.HandshakeContext(ctx); c.err != nil {
			c.log.Warn("raft connection refused", "peer", c.RemoteAddr().String(), "err", c.err)
			_ = c.Close()
		}
	})
	if c.err != nil {
		return 0, c.err
	}
	return c.Conn.Read(p)
}
