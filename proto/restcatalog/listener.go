package restcatalog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Listener serves the endpoint on its own address, optionally over TLS,
// for deployments that expose the catalog but not the admin port.
type Listener struct {
	srv *http.Server
	ln  net.Listener
	tls bool
}

// Listen binds addr and serves h below MountPath (and /healthz, which
// needs no token). With certFile and keyFile it serves HTTPS.
func Listen(addr string, h *Handler, certFile, keyFile string) (*Listener, error) {
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", h.Mount())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	l := &Listener{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: MaxHeaderBytes}}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the catalog's TLS certificate: %w", err)
		}
		l.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		l.tls = true
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for the REST catalog on %s: %w", addr, err)
	}
	l.ln = ln
	return l, nil
}

// Addr returns the bound address.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// URI returns the catalog URI clients use.
func (l *Listener) URI() string {
	scheme := "http"
	if l.tls {
		scheme = "https"
	}
	return scheme + "://" + l.Addr() + MountPath
}

// Serve serves until Shutdown.
func (l *Listener) Serve() error {
	var err error
	if l.tls {
		err = l.srv.ServeTLS(l.ln, "", "")
	} else {
		err = l.srv.Serve(l.ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the listener.
func (l *Listener) Shutdown(ctx context.Context) error { return l.srv.Shutdown(ctx) }
