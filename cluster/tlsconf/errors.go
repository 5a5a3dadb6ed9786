package tlsconf

import "errors"

var (
	// ErrNoPeerCert: the peer presented no certificate where one is required.
	ErrNoPeerCert = errors.New("peer presented no certificate")
	// ErrPeerCert: the peer's certificate is not signed by the cluster CA,
	// has expired, is for another use, or lacks the expected server name.
	ErrPeerCert = errors.New("peer certificate refused")
	// ErrMaterial: inline PEM (ca_pem, cert_pem, key_pem) that is not PEM,
	// a key not of its certificate, a certificate not signed by the CA or
	// without the server name; wrapped in a MaterialError naming the field.
	ErrMaterial = errors.New("internal tls material refused")
	// ErrExists: floe tls refuses to overwrite a file.
	ErrExists = errors.New("file exists")
)
