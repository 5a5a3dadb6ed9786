package tlsconf

import "errors"

var (
	// ErrNoPeerCert: the peer presented no certificate where one is required.
	ErrNoPeerCert = errors.New("peer presented no certificate")
	// ErrPeerCert: the peer's certificate is not signed by the cluster CA,
	// has expired, is for another use, or lacks the expected server name.
	ErrPeerCert = errors.New("peer certificate refused")
	// ErrExists: floe tls refuses to overwrite a file.
	ErrExists = errors.New("file exists")
)
