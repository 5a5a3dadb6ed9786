// Package config loads and validates Floe's configuration: a YAML file whose
// every field can be overridden by an environment variable named FLOE_ plus
// the field's path in upper case joined by underscores (for example
// kafka.bootstrap_servers is FLOE_KAFKA_BOOTSTRAP_SERVERS). Lists of strings
// take comma-separated values; lists of objects (tables) take YAML or JSON.
//
// Validation names the offending field, so a bad deployment stops at start-up
// with a message an operator can act on.
package config
