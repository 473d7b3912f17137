package main

import (
	"io"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/metrics"
	"github.com/goshmem/shmem/sim"
)

// withMetrics adds shmem.WithMetrics to opts under -metrics.
func withMetrics(c config, opts []shmem.Option) []shmem.Option {
	if c.metrics {
		opts = append(opts, shmem.WithMetrics())
	}
	return opts
}

// simMetrics adds sim.WithMetrics to opts under -metrics.
func simMetrics(c config, opts ...sim.Option) []sim.Option {
	if c.metrics {
		opts = append(opts, sim.WithMetrics())
	}
	return opts
}

// printMetrics writes the series package metrics' Collector serves for
// pes to w, in Prometheus' text format.
func printMetrics(w io.Writer, pes ...*shmem.PE) error {
	reg := prometheus.NewRegistry()
	if err := reg.Register(metrics.NewCollector(pes...)); err != nil {
		return err
	}
	fams, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}
