// Package embedded is the in-process Kafka broker (franz-go's kfake) and
// Schema Registry (worker/schemas/registrytest) that `floe demo` and
// `floe bench` run against, and the loopback addresses their in-process
// nodes listen on. Both fakes are test code linked into the binary only for
// those commands, so this is the one production package that imports them
// (internal/archtest checks): everything else calls the small API here.
package embedded
