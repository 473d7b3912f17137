// Package metrics exports goshmem PEs' metrics (shmem.WithMetrics) to
// Prometheus. A service registers a Collector for its PEs on a registry
// of its own choosing; nothing is registered implicitly:
//
//	p, err := shmem.Init(ctx, shmem.WithMetrics())
//	...
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(metrics.NewCollector(p))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Every series carries the labels world (the world's identity in hex) and
// pe (the PE's number in it), so one collector may serve PEs of several
// worlds in one process. README.md's "Metrics" section lists the names.
package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/goshmem/shmem"
)

// The metric names.
const (
	NameOps            = "shmem_ops_total"
	NameBytes          = "shmem_bytes_total"
	NameLatency        = "shmem_op_latency_seconds"
	NameCollectives    = "shmem_collectives_total"
	NameCollectiveTime = "shmem_collective_seconds_total"
	NameFailuresSeen   = "shmem_pe_failures_detected_total"
	NameHeapInUse      = "shmem_heap_in_use_bytes"
	NameHeapFree       = "shmem_heap_free_bytes"
	NameMetricsLevel   = "shmem_metrics_level"
	NameMetricsEnabled = "shmem_metrics_enabled"
)

var (
	peLabels = []string{"world", "pe"}
	opLabels = []string{"world", "pe", "op", "path"}

	descOps = prometheus.NewDesc(NameOps,
		"Operations issued, per operation kind and path kind.", opLabels, nil)
	descBytes = prometheus.NewDesc(NameBytes,
		"Bytes moved by the operations (atomics: the word; signals: data and the 8-byte signal).", opLabels, nil)
	descLatency = prometheus.NewDesc(NameLatency,
		"Time to return of sampled operations (1 in shmem.MetricsSampleEvery at Pcontrol level 1, every one at 2).", opLabels, nil)
	descColl = prometheus.NewDesc(NameCollectives,
		"Collective calls, failed ones included, per kind.", []string{"world", "pe", "kind"}, nil)
	descCollTime = prometheus.NewDesc(NameCollectiveTime,
		"Time spent in collective calls, per kind.", []string{"world", "pe", "kind"}, nil)
	descFailed = prometheus.NewDesc(NameFailuresSeen,
		"PEs this PE has recorded as failed.", peLabels, nil)
	descHeapUsed = prometheus.NewDesc(NameHeapInUse,
		"Symmetric heap bytes requested by live objects (goshmem's team slots included).", peLabels, nil)
	descHeapFree = prometheus.NewDesc(NameHeapFree,
		"Usable symmetric heap bytes not in use (before growth; alignment padding counts as free).", peLabels, nil)
	descLevel = prometheus.NewDesc(NameMetricsLevel,
		"The PE's Pcontrol level: 0 counting stopped, 1 counting with sampled latency, 2 every operation timed.", peLabels, nil)
	descEnabled = prometheus.NewDesc(NameMetricsEnabled,
		"1 when the PE was started with shmem.WithMetrics; without, only this series is reported for it.", peLabels, nil)
)

// Collector is a prometheus.Collector over one or several PEs. It holds no
// state of its own: each Collect reads the PEs' counters.
type Collector struct {
	pes []*shmem.PE
}

// NewCollector returns a Collector over pes. A PE started without
// shmem.WithMetrics reports only shmem_metrics_enabled 0. Two PEs with
// the same world and number (a PE and one of its contexts) would report
// the same series twice, which a registry refuses at Gather: pass PEs,
// not contexts (a PE's metrics include its contexts').
func NewCollector(pes ...*shmem.PE) *Collector {
	return &Collector{pes: append([]*shmem.PE(nil), pes...)}
}

// Describe sends the descriptions of every metric the Collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOps, descBytes, descLatency, descColl, descCollTime,
		descFailed, descHeapUsed, descHeapFree, descLevel, descEnabled} {
		ch <- d
	}
}

// Collect sends the current value of every series of every PE.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.pes {
		collectPE(ch, p)
	}
}

func collectPE(ch chan<- prometheus.Metric, p *shmem.PE) {
	m, ok := p.Metrics()
	world, pe := strconv.FormatUint(m.World, 16), strconv.Itoa(m.PE)
	if !ok {
		ch <- prometheus.MustNewConstMetric(descEnabled, prometheus.GaugeValue, 0, world, pe)
		return
	}
	ch <- prometheus.MustNewConstMetric(descEnabled, prometheus.GaugeValue, 1, world, pe)
	ch <- prometheus.MustNewConstMetric(descLevel, prometheus.GaugeValue, float64(m.Level), world, pe)
	ch <- prometheus.MustNewConstMetric(descFailed, prometheus.CounterValue, float64(m.FailedPEs), world, pe)
	ch <- prometheus.MustNewConstMetric(descHeapUsed, prometheus.GaugeValue, float64(m.HeapInUse), world, pe)
	ch <- prometheus.MustNewConstMetric(descHeapFree, prometheus.GaugeValue, float64(max(m.HeapSize-m.HeapInUse, 0)), world, pe)
	for _, o := range m.Ops {
		ch <- prometheus.MustNewConstMetric(descOps, prometheus.CounterValue, float64(o.Count), world, pe, o.Op, o.Path)
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.CounterValue, float64(o.Bytes), world, pe, o.Op, o.Path)
		h := o.Latency
		buckets := make(map[float64]uint64, len(h.Bounds))
		for i, b := range h.Bounds {
			buckets[b.Seconds()] = h.Cumulative[i]
		}
		ch <- prometheus.MustNewConstHistogram(descLatency, h.Count, h.Sum.Seconds(), buckets, world, pe, o.Op, o.Path)
	}
	for _, k := range m.Collectives {
		ch <- prometheus.MustNewConstMetric(descColl, prometheus.CounterValue, float64(k.Count), world, pe, k.Kind)
		ch <- prometheus.MustNewConstMetric(descCollTime, prometheus.CounterValue, k.Time.Seconds(), world, pe, k.Kind)
	}
}
