package config

// Parts are the sections owned by the daemons; each part declares its own Config struct and
// defaults in its own package, and this is the only place that knows them all.
type Parts struct{}

// DefaultParts returns every part's defaults.
func DefaultParts() Parts { return Parts{} }

func (p *Parts) validate() []error { return nil }
