package ctl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

const defaultAddr = "127.0.0.1:7421"

// options are the connection and output flags shared by floe ctl and floe status.
type options struct {
	addr       string
	token      string
	tokenFile  string
	tls        bool
	caFile     string
	certFile   string
	keyFile    string
	serverName string
	timeout    time.Duration
	output     string
}

// register adds the connection flags to fs (ctl's persistent flags, status's flags).
func (o *options) register(fs *pflag.FlagSet, timeout time.Duration) {
	fs.StringVar(&o.addr, "addr", defaultAddr, "admin address of a node, host:port (env FLOE_ADDR)")
	fs.StringVar(&o.token, "token", "", "bearer token (env FLOE_TOKEN); read scope for reads, admin scope for writes")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the bearer token")
	fs.BoolVar(&o.tls, "tls", false, "connect with TLS (default: plaintext h2c)")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM CA bundle to verify the node's certificate (implies --tls; default: system roots)")
	fs.StringVar(&o.certFile, "cert-file", "", "PEM client certificate for mTLS (implies --tls; needs --key-file)")
	fs.StringVar(&o.keyFile, "key-file", "", "PEM key of the client certificate (implies --tls)")
	fs.StringVar(&o.serverName, "server-name", "", "name to verify the node's certificate against (implies --tls; default: the host of --addr)")
	fs.DurationVar(&o.timeout, "timeout", timeout, "deadline of the whole command")
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
}

// resolve applies the environment to flags not given, reads the token file and checks
// the flags' values. Errors are usage errors (exit code 2).
func (o *options) resolve(fs *pflag.FlagSet) error {
	if !fs.Changed("addr") {
		if v := os.Getenv("FLOE_ADDR"); v != "" {
			o.addr = v
		}
	}
	if o.addr == "" {
		return usageErrorf("--addr is empty")
	}
	if o.output != "text" && o.output != "json" {
		return usageErrorf("--output %q: use text or json", o.output)
	}
	if fs.Changed("token") && o.tokenFile != "" {
		return usageErrorf("--token and --token-file: give one")
	}
	if !fs.Changed("token") && o.tokenFile == "" {
		o.token = os.Getenv("FLOE_TOKEN")
	}
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return usageErrorf("--token-file: %w", err)
		}
		o.token = strings.TrimSpace(string(b))
		if o.token == "" {
			return usageErrorf("--token-file %s is empty", o.tokenFile)
		}
	}
	o.token = strings.TrimSpace(o.token)
	if (o.certFile == "") != (o.keyFile == "") {
		return usageErrorf("--cert-file and --key-file go together")
	}
	if o.timeout <= 0 {
		return usageErrorf("--timeout must be positive")
	}
	return nil
}

func (o *options) useTLS() bool {
	return o.tls || o.caFile != "" || o.certFile != "" || o.keyFile != "" || o.serverName != ""
}

// tlsConfig builds the client TLS configuration from the flags.
func (o *options) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.serverName}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, usageErrorf("--ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usageErrorf("--ca-file %s: no PEM certificate in it", o.caFile)
		}
		cfg.RootCAs = pool
	}
	if o.certFile != "" {
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return nil, usageErrorf("--cert-file/--key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// bearer sends the token as "authorization: Bearer <token>" on every call. It allows
// plaintext connections: a token over h2c is readable on the network, so use
// plaintext only on trusted networks and --tls elsewhere.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

// client is a connection to a node's admin API.
type client struct {
	addr    string
	conn    *grpc.ClientConn
	cluster adminv1.ClusterServiceClient
	tables  adminv1.TableServiceClient
	health  adminv1.HealthServiceClient
}

// dial creates the gRPC client (grpc.NewClient connects lazily, on the first call).
func (o *options) dial() (*client, error) {
	creds := insecure.NewCredentials()
	if o.useTLS() {
		cfg, err := o.tlsConfig()
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	dopts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if o.token != "" {
		dopts = append(dopts, grpc.WithPerRPCCredentials(bearer(o.token)))
	}
	conn, err := grpc.NewClient(o.addr, dopts...)
	if err != nil {
		return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("connecting to %s: %w", o.addr, err)}
	}
	return &client{
		addr:    o.addr,
		conn:    conn,
		cluster: adminv1.NewClusterServiceClient(conn),
		tables:  adminv1.NewTableServiceClient(conn),
		health:  adminv1.NewHealthServiceClient(conn),
	}, nil
}
