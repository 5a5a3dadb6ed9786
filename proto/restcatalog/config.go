package restcatalog

import "net/http"

// Endpoints lists the routes this server serves, in the spec's
// "<verb> <path>" form, so that clients fail fast (before any request) on
// operations Floe does not offer.
var Endpoints = []string{
	"GET /v1/{prefix}/namespaces",
	"GET /v1/{prefix}/namespaces/{namespace}",
	"HEAD /v1/{prefix}/namespaces/{namespace}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
	// Views: an empty list and 404s (Floe makes none), served so engines
	// that list views beside tables do not fail.
	"GET /v1/{prefix}/namespaces/{namespace}/views",
	"GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
}

type catalogConfig struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints"`
}

func (h *Handler) config(w http.ResponseWriter, _ *http.Request) {
	// The warehouse query parameter is ignored: a Floe cluster has one
	// warehouse, served under DefaultPrefix (or no prefix).
	writeJSON(w, catalogConfig{
		Defaults:  map[string]string{},
		Overrides: map[string]string{"prefix": DefaultPrefix},
		Endpoints: Endpoints,
	})
}
