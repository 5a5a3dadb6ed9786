package node

// ConfigError is a start refused because of the configuration or the
// warehouse it names (unreadable tokens or certificates, an old cluster's
// backup without --recover): `floe serve` exits with its configuration code
// rather than the generic failure.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }
