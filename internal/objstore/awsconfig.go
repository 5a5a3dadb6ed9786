package objstore

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	icebergs3 "github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/aws/aws-sdk-go-v2/aws"
)

// awsConfigs holds the AWS configuration resolved for each set of FileIO
// properties. iceberg-go opens a FileIO for every file operation, and
// resolving the configuration (aws-sdk-go-v2's LoadDefaultConfig) parses
// the CA bundle and builds a new HTTP client each time: at 100 quiet tables
// on one node that was 39% of the CPU, plus the collector's share of its
// garbage, and no connection was ever reused. A configuration is resolved
// once per property set (one per warehouse in practice) and shared; its
// credentials provider caches and refreshes itself (ECS task roles), so
// sharing it is what the SDK intends.
var awsConfigs sync.Map // fingerprint of the properties -> aws.Config

// awsConfigFor returns the shared configuration for props, with the
// counting middleware. A failure is not kept: the next open tries again.
func awsConfigFor(ctx context.Context, props map[string]string) (aws.Config, error) {
	key := fingerprint(props)
	if v, ok := awsConfigs.Load(key); ok {
		return clipped(v.(aws.Config)), nil
	}
	cfg, err := icebergs3.ParseAWSConfig(ctx, props)
	if err != nil {
		return aws.Config{}, err
	}
	cfg.APIOptions = append(cfg.APIOptions, addCounter)
	v, _ := awsConfigs.LoadOrStore(key, *cfg)
	return clipped(v.(aws.Config)), nil
}

// clipped is cfg with its option slices at capacity, so that an append by
// a client built from one copy never writes into another copy's array.
func clipped(cfg aws.Config) aws.Config {
	cfg.APIOptions = slices.Clip(cfg.APIOptions)
	return cfg
}

func fingerprint(props map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(props[k])
		b.WriteByte(0)
	}
	return b.String()
}
