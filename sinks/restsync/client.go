package restsync

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// client speaks the parts of the REST catalog protocol the sync needs:
// /v1/config, OAuth2 client credentials, and JSON requests with a bearer
// token.
type client struct {
	cfg  Config
	http *http.Client

	mu        sync.Mutex
	prefix    string // resolved at the first successful /v1/config
	resolved  bool
	token     string
	expiresAt time.Time
}

// base returns the URI of /v1/{prefix}.
func (c *client) base() string {
	u := strings.TrimSuffix(c.cfg.URI, "/") + "/v1"
	if c.prefix != "" {
		u += "/" + strings.Trim(c.prefix, "/")
	}
	return u
}

// init reads /v1/config once: its prefix (unless configured) is where the
// catalog's routes live.
func (c *client) init(ctx context.Context) error {
	c.mu.Lock()
	done := c.resolved
	c.mu.Unlock()
	if done {
		return nil
	}
	u := strings.TrimSuffix(c.cfg.URI, "/") + "/v1/config"
	if c.cfg.Warehouse != "" {
		u += "?warehouse=" + url.QueryEscape(c.cfg.Warehouse)
	}
	var cfg struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
	}
	if _, err := c.do(ctx, "reading the catalog's config", http.MethodGet, u, nil, &cfg, http.StatusOK); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prefix = c.cfg.Prefix
	if c.prefix == "" {
		c.prefix = cfg.Defaults["prefix"]
		if p := cfg.Overrides["prefix"]; p != "" {
			c.prefix = p
		}
	}
	c.resolved = true
	return nil
}

// bearer returns the token to send: the static one, or one obtained with
// the client credentials and cached until shortly before it expires.
func (c *client) bearer(ctx context.Context) (string, error) {
	if c.cfg.Token != "" || c.cfg.ClientID == "" {
		return c.cfg.Token, nil
	}
	c.mu.Lock()
	tok, exp := c.token, c.expiresAt
	c.mu.Unlock()
	if tok != "" && time.Now().Before(exp) {
		return tok, nil
	}
	uri := c.cfg.TokenURI
	if uri == "" {
		uri = strings.TrimSuffix(c.cfg.URI, "/") + "/v1/oauth/tokens"
	}
	scope := c.cfg.Scope
	if scope == "" {
		scope = "catalog"
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.cfg.ClientID}, "client_secret": {c.cfg.ClientSecret}, "scope": {scope}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("requesting a token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("requesting a token from %s: %w", uri, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", &apiError{Op: "requesting a token from " + uri, Status: resp.StatusCode, Type: "oauth", Message: strings.TrimSpace(string(body))}
	}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.AccessToken == "" {
		return "", fmt.Errorf("token answer of %s has no access_token: %s", uri, body)
	}
	ttl := time.Duration(out.ExpiresIn) * time.Second
	if ttl <= 0 {
		ttl = time.Hour
	}
	c.mu.Lock()
	// Renew a little early so a token never expires mid-sync.
	c.token, c.expiresAt = out.AccessToken, time.Now().Add(ttl*9/10)
	c.mu.Unlock()
	return out.AccessToken, nil
}

// authorize signs req (SigV4) or adds the bearer token, if any.
func (c *client) authorize(ctx context.Context, req *http.Request) error {
	if c.cfg.SigV4 != nil {
		return c.cfg.SigV4.sign(ctx, req)
	}
	tok, err := c.bearer(ctx)
	if err != nil {
		return err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}

// forget drops a cached token the catalog refused.
func (c *client) forget() {
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
}

// do sends a JSON request and decodes a JSON answer into out when the
// status is one of ok; it returns the status. Any other status is an
// *apiError. A 401 with a cached OAuth2 token is retried once with a new
// token.
func (c *client) do(ctx context.Context, op, method, uri string, in, out any, ok ...int) (int, error) {
	for attempt := 0; ; attempt++ {
		status, err := c.once(ctx, op, method, uri, in, out, ok)
		if status == http.StatusUnauthorized && c.cfg.ClientID != "" && attempt == 0 {
			c.forget()
			continue
		}
		return status, err
	}
}

func (c *client) once(ctx context.Context, op, method, uri string, in, out any, ok []int) (int, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("%s: encoding: %w", op, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, uri, body)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := c.authorize(ctx, req); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	for _, s := range ok {
		if resp.StatusCode == s {
			if out != nil && len(bytes.TrimSpace(data)) > 0 {
				if err := json.Unmarshal(data, out); err != nil {
					return resp.StatusCode, fmt.Errorf("%s: decoding the answer: %w", op, err)
				}
			}
			return resp.StatusCode, nil
		}
	}
	e := &apiError{Op: op, Status: resp.StatusCode, Message: strings.TrimSpace(string(data))}
	var em struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &em) == nil && em.Error.Type != "" {
		e.Type, e.Message = em.Error.Type, em.Error.Message
	}
	return resp.StatusCode, e
}
