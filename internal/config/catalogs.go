package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"time"
)

// Auth configures bearer-token authentication of the node's HTTP APIs (the
// Iceberg REST catalog today; the admin API reuses it). With no token
// configured, authentication is off.
type Auth struct {
	// TokensFile holds one "TOKEN SCOPE" per line, SCOPE read (default) or
	// admin; # starts a comment line.
	TokensFile string `yaml:"tokens_file"`
	// Tokens lists more tokens as "TOKEN:SCOPE,TOKEN:SCOPE" (FLOE_AUTH_TOKENS).
	Tokens string `yaml:"tokens"`
}

// Catalogs configures the Iceberg REST catalog that every node serves and
// the external catalogs every table is mirrored to, one way.
type Catalogs struct {
	Server CatalogServer `yaml:"server"`
	Glue   Glue          `yaml:"glue"`
	// REST lists external Iceberg REST catalogs (Polaris, Unity, ...).
	REST []RESTCatalog `yaml:"rest"`
	// SyncInterval is the least time between two syncs of one table to one
	// catalog: the commits in between are coalesced into one update.
	SyncInterval Duration `yaml:"sync_interval"`
	// SyncTimeout bounds one sync (all calls to the catalog for one table).
	SyncTimeout Duration `yaml:"sync_timeout"`
}

// CatalogServer configures the Iceberg REST catalog endpoint.
type CatalogServer struct {
	// Enabled serves the endpoint (default true).
	Enabled bool `yaml:"enabled"`
	// Addr is a separate listener for the endpoint; empty serves it on
	// node.admin_addr. Either way its base URI ends in /iceberg.
	Addr string `yaml:"addr"`
	// TLS serves the separate listener over HTTPS (requires addr).
	TLS ServerTLS `yaml:"tls"`
	// Consistency is local (reads from this node's replicated state, the
	// default) or strong (every read waits until this node has applied
	// what the leader had committed). A client asks for strong reads per
	// request with the header X-Floe-Consistency: strong.
	Consistency string `yaml:"consistency"`
	// VendCredentials adds the warehouse's static S3 keys to each loaded
	// table's config, for readers that have no credentials of their own.
	VendCredentials bool `yaml:"vend_credentials"`
}

// ServerTLS is a server certificate and key (PEM files).
type ServerTLS struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Glue configures the one-way mirror of every table to AWS Glue.
type Glue struct {
	Enabled bool `yaml:"enabled"`
	// Region of the Glue catalog; empty uses the standard AWS chain.
	Region string `yaml:"region"`
	// Endpoint overrides the Glue endpoint (moto, VPC endpoints).
	Endpoint string `yaml:"endpoint"`
	// CatalogID is the AWS account id owning the catalog; empty: the
	// caller's account.
	CatalogID string `yaml:"catalog_id"`
	// DatabasePrefix is put before each namespace's Glue database name.
	DatabasePrefix string `yaml:"database_prefix"`
	// SkipArchive leaves no Glue table version behind per update (default
	// true: a table committing every few seconds would otherwise hit
	// Glue's version limit).
	SkipArchive bool `yaml:"skip_archive"`
}

// RESTCatalog is an external Iceberg REST catalog that tables are
// registered in and kept pointing at their current metadata.
type RESTCatalog struct {
	// Name identifies the catalog in status and in the replicated sync
	// record; default rest-<index>.
	Name string `yaml:"name"`
	// URI is the catalog's base URI (the part before /v1).
	URI       string `yaml:"uri"`
	Warehouse string `yaml:"warehouse"`
	// Prefix is the path prefix; empty uses the one /v1/config returns.
	Prefix string `yaml:"prefix"`
	// Token is a static bearer token.
	Token string `yaml:"token"`
	// OAuth2 client credentials, exchanged for a token at TokenURI
	// (default <uri>/v1/oauth/tokens).
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	TokenURI     string `yaml:"token_uri"`
	Scope        string `yaml:"scope"`
	// TokenFile and ClientSecretFile: the secrets from files (secrets.go).
	TokenFile        string `yaml:"token_file"`
	ClientSecretFile string `yaml:"client_secret_file"`
	// SigV4 signs every request with AWS Signature Version 4 and the
	// default credential chain instead of sending a token (Glue's Iceberg
	// REST endpoint).
	SigV4 SigV4 `yaml:"sigv4"`
}

// SigV4 is the AWS request signing of a REST catalog.
type SigV4 struct {
	Enabled bool `yaml:"enabled"`
	// SigningName is the AWS service the requests are signed for: glue.
	// (s3tables is refused: see validateSigV4.)
	SigningName string `yaml:"signing_name"`
	// Region defaults to the one in the URI's host
	// (glue.<region>.amazonaws.com).
	Region string `yaml:"region"`
}

func catalogDefaults() Catalogs {
	return Catalogs{
		Server:       CatalogServer{Enabled: true, Consistency: "local"},
		Glue:         Glue{SkipArchive: true},
		SyncInterval: Duration(5 * time.Second),
		SyncTimeout:  Duration(30 * time.Second),
	}
}

var catalogNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_\-]*$`)

// gluePrefixRe is what catalogs.glue.database_prefix may hold: the
// characters of a Floe name (internal/names), lower-cased for Glue.
var gluePrefixRe = regexp.MustCompile(`^[A-Za-z0-9_\-]*$`)

func (c *Config) validateCatalogs(bad func(field, format string, args ...any)) {
	s := c.Catalogs.Server
	if s.Addr != "" {
		if _, port, err := net.SplitHostPort(s.Addr); err != nil || port == "" {
			bad("catalogs.server.addr", "%q is not host:port", s.Addr)
		}
	}
	if (s.TLS.CertFile == "") != (s.TLS.KeyFile == "") {
		bad("catalogs.server.tls.key_file", "set both cert_file and key_file, or neither")
	}
	if s.TLS.CertFile != "" && s.Addr == "" {
		bad("catalogs.server.tls.cert_file", "TLS needs a separate listener: set catalogs.server.addr")
	}
	switch s.Consistency {
	case "local", "strong":
	default:
		bad("catalogs.server.consistency", "%q: use local or strong", s.Consistency)
	}
	if c.Catalogs.SyncInterval.D() < 100*time.Millisecond {
		bad("catalogs.sync_interval", "%s is below the 100ms minimum", c.Catalogs.SyncInterval.D())
	}
	if c.Catalogs.SyncTimeout.D() < time.Second {
		bad("catalogs.sync_timeout", "%s is below the 1s minimum", c.Catalogs.SyncTimeout.D())
	}
	if g := c.Catalogs.Glue; g.Enabled && g.Endpoint != "" {
		if u, err := url.Parse(g.Endpoint); err != nil || u.Scheme == "" || u.Host == "" {
			bad("catalogs.glue.endpoint", "%q is not a URL like http://127.0.0.1:5000", g.Endpoint)
		}
	}
	// Glue stops database names at 255 characters and the prefix comes
	// before every namespace's name (sinks/glue.MaxName).
	if p := c.Catalogs.Glue.DatabasePrefix; len(p) > 254 || !gluePrefixRe.MatchString(p) {
		bad("catalogs.glue.database_prefix", "%.64q: use at most 254 of A-Z a-z 0-9 _ -", p)
	}
	names := map[string]bool{"glue": true}
	for i := range c.Catalogs.REST {
		r := &c.Catalogs.REST[i]
		f := func(n string) string { return fmt.Sprintf("catalogs.rest[%d].%s", i, n) }
		if r.Name == "" {
			r.Name = fmt.Sprintf("rest-%d", i)
		}
		if !catalogNameRe.MatchString(r.Name) {
			bad(f("name"), "%q: use lower-case letters, digits, _ and -", r.Name)
		} else if names[r.Name] {
			bad(f("name"), "%q is already the name of another catalog", r.Name)
		}
		names[r.Name] = true
		if u, err := url.Parse(r.URI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(f("uri"), "%q is not an http(s) URL", r.URI)
		}
		if r.Token != "" && r.ClientID != "" {
			bad(f("client_id"), "set token or client_id/client_secret, not both")
		}
		if (r.ClientID == "") != (r.ClientSecret == "") {
			bad(f("client_secret"), "set both client_id and client_secret")
		}
		if r.TokenURI != "" {
			if u, err := url.Parse(r.TokenURI); err != nil || u.Scheme == "" || u.Host == "" {
				bad(f("token_uri"), "%q is not a URL", r.TokenURI)
			}
		}
		if r.SigV4.Enabled {
			c.validateSigV4(r, f, bad)
		}
	}
}

// awsHostRe reads the service and region from an AWS endpoint's host.
var awsHostRe = regexp.MustCompile(`^([a-z0-9-]+)\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com(?:\.cn)?$`)

// validateSigV4 checks a signed REST catalog and fills its region from the
// URI. S3 Tables is refused: a table there keeps its data and metadata in
// its table bucket, at the location S3 Tables assigns when the table is
// created, and its endpoint creates and commits tables but does not
// register metadata written elsewhere, so Floe's tables, whose files live
// in the warehouse, cannot be mirrored there.
func (c *Config) validateSigV4(r *RESTCatalog, f func(string) string, bad func(field, format string, args ...any)) {
	if r.Token != "" || r.ClientID != "" || r.TokenFile != "" {
		bad(f("sigv4.enabled"), "a SigV4-signed catalog takes no token or client_id")
	}
	switch r.SigV4.SigningName {
	case "glue":
	case "s3tables":
		bad(f("sigv4.signing_name"), "s3tables: S3 Tables keeps each table's files in its table bucket at a location it assigns and does not register tables whose files live elsewhere, so the tables of warehouse %q cannot be mirrored there; mirror to Glue's Iceberg REST endpoint (signing_name glue) or to AWS Glue (catalogs.glue), which S3 Tables' own integration also reads", c.Warehouse)
	case "":
		bad(f("sigv4.signing_name"), "set the AWS service to sign for: glue")
	default:
		bad(f("sigv4.signing_name"), "%q: use glue", r.SigV4.SigningName)
	}
	if r.SigV4.Region == "" {
		if u, err := url.Parse(r.URI); err == nil {
			if m := awsHostRe.FindStringSubmatch(u.Hostname()); m != nil {
				r.SigV4.Region = m[2]
			}
		}
	}
	if r.SigV4.Region == "" {
		bad(f("sigv4.region"), "set the region: the URI's host %q does not name one", r.URI)
	}
}
