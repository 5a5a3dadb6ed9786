package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/floe-io/floe/internal/config"
)

// ecsDefaults fills node.zone from the ECS task metadata endpoint when Floe
// runs as an ECS task and no zone is configured: one task definition serves
// tasks in every zone, so the zone cannot come from the configuration.
func ecsDefaults(ctx context.Context, cfg *config.Config, log *slog.Logger) {
	uri := os.Getenv("ECS_CONTAINER_METADATA_URI_V4")
	if uri == "" || cfg.Node.Zone != "" {
		return
	}
	zone, err := ecsZone(ctx, uri)
	if err != nil {
		log.Warn("reading the availability zone from the ECS task metadata; placement ignores zones", "err", err)
		return
	}
	cfg.Node.Zone = zone
}

func ecsZone(ctx context.Context, uri string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri+"/task", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("task metadata: %s", resp.Status)
	}
	var task struct {
		AvailabilityZone string `json:"AvailabilityZone"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&task); err != nil {
		return "", fmt.Errorf("task metadata: %w", err)
	}
	if task.AvailabilityZone == "" {
		return "", fmt.Errorf("task metadata has no AvailabilityZone")
	}
	return task.AvailabilityZone, nil
}
