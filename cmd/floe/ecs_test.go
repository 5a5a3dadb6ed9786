package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/floe-io/floe/internal/config"
)

func TestECSZoneFromTaskMetadata(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/task" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"Cluster":"c","AvailabilityZone":"eu-west-1b"}`)
	}))
	defer srv.Close()
	t.Setenv("ECS_CONTAINER_METADATA_URI_V4", srv.URL)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config.Defaults()
	ecsDefaults(context.Background(), &cfg, log)
	if cfg.Node.Zone != "eu-west-1b" {
		t.Fatalf("zone %q, want eu-west-1b", cfg.Node.Zone)
	}
	cfg.Node.Zone = "configured"
	ecsDefaults(context.Background(), &cfg, log)
	if cfg.Node.Zone != "configured" {
		t.Fatalf("a configured zone was overridden: %q", cfg.Node.Zone)
	}
}
