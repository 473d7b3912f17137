package sim

// WithMetrics turns on every PE's metrics, as shmem.WithMetrics does for
// Init; their path kind is "sim".
func WithMetrics() Option { return func(c *config) { c.metrics = true } }
