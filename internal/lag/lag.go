// Package lag tells a slow process from a still one, for the deadlock
// detectors of in-process worlds, which count real time: goroutines that
// waited long to run, or a look that came late, say the process is behind.
package lag

import (
	"runtime/metrics"
	"time"
)

// schedLatencies is the runtime metric of how long goroutines waited,
// runnable, before they ran.
const schedLatencies = "/sched/latencies:seconds"

// Lag tells a deadlock detector a slow process from a still world. A
// detector ends a world in which nothing changed for its grace period;
// on an overloaded machine (two test suites at once under -race) a world
// of 1024 PEs whose allocation had been answered was ended so while most
// of its PEs' goroutines still waited to run (TestSmoke1024PEs: 1.5 s
// without a change, half the PEs past the agreement, half not back from
// it). Goroutines that waited long to run since the detector last looked,
// or a look that came late, say the process is behind, not stuck: the
// grace starts again.
type Lag struct {
	read   func() *metrics.Float64Histogram // the scheduling latencies so far
	bound  float64                          // seconds of waiting to run that count as behind
	over   uint64                           // latencies at or over bound counted so far
	period time.Duration                    // between looks
	last   time.Time                        // the last look
}

// New returns the Lag of a detector that looks every period. A wait to
// run of a quarter period is far beyond a healthy process's (microseconds)
// and far below a grace of several periods. A Lag is one detector's: it
// is not safe for concurrent use.
func New(period time.Duration) *Lag {
	return NewFrom(period, runtimeLatencies())
}

// NewFrom is New reading the scheduling latencies from read (a histogram
// of seconds, cumulative, as the runtime keeps them; nil when unknown):
// the detectors' tests drive a Lag with it.
func NewFrom(period time.Duration, read func() *metrics.Float64Histogram) *Lag {
	return &Lag{read: read, bound: (period / 4).Seconds(), period: period}
}

// runtimeLatencies reads the runtime's scheduling latencies.
func runtimeLatencies() func() *metrics.Float64Histogram {
	sample := []metrics.Sample{{Name: schedLatencies}}
	read := func() *metrics.Float64Histogram {
		// Read reuses the histogram it returned last time: no
		// allocation a look after the first.
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
			return nil
		}
		return sample[0].Value.Float64Histogram()
	}
	return read
}

// Behind reports whether, since its last call, a goroutine of the process
// waited more than the bound to run or this look came over a period late
// (the process itself did not run). The first call only takes stock.
func (l *Lag) Behind(now time.Time) bool {
	late := !l.last.IsZero() && now.Sub(l.last) > 2*l.period
	first := l.last.IsZero()
	l.last = now
	h := l.read()
	if h == nil {
		return late
	}
	var over uint64
	for i, c := range h.Counts {
		// Bucket i holds the waits in [Buckets[i], Buckets[i+1]).
		if h.Buckets[i] >= l.bound {
			over += c
		}
	}
	grew := over > l.over && !first
	l.over = over
	return late || grew
}
