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

// descs are the descriptions of the series a Collector reports.
type descs struct {
	ops, bytes, latency, coll, collTime, failed, conns, redials, heapUsed, heapFree, level, enabled *prometheus.Desc
}

// newDescs describes every series; each Collector has its own, so
// nothing is shared between collectors or registries.
func newDescs() descs {
	peLabels := []string{"world", "pe"}
	opLabels := []string{"world", "pe", "op", "path"}
	return descs{
		ops: prometheus.NewDesc("shmem_ops_total",
			"Operations issued, per operation kind and path kind.", opLabels, nil),
		bytes: prometheus.NewDesc("shmem_bytes_total",
			"Bytes moved by the operations (atomics: the word; signals: data and the 8-byte signal).", opLabels, nil),
		latency: prometheus.NewDesc("shmem_op_latency_seconds",
			"Time to return of sampled operations (1 in shmem.MetricsSampleEvery at Pcontrol level 1, every one at 2; never Fence, which waits for nothing).", opLabels, nil),
		coll: prometheus.NewDesc("shmem_collectives_total",
			"Collective calls, failed ones included, per kind.", []string{"world", "pe", "kind"}, nil),
		collTime: prometheus.NewDesc("shmem_collective_seconds_total",
			"Time spent in collective calls, per kind.", []string{"world", "pe", "kind"}, nil),
		failed: prometheus.NewDesc("shmem_pe_failures_detected_total",
			"PEs this PE has recorded as failed.", peLabels, nil),
		conns: prometheus.NewDesc("shmem_connections_total",
			"Connections this PE dialled to its peers (TCP; none on shared memory).", peLabels, nil),
		redials: prometheus.NewDesc("shmem_reconnects_total",
			"Dials repeated after a failed dial or handshake to the same peer (a connection that broke once established is never reconnected: its peer counts as failed).", peLabels, nil),
		heapUsed: prometheus.NewDesc("shmem_heap_in_use_bytes",
			"Symmetric heap bytes requested by live objects (goshmem's team slots included).", peLabels, nil),
		heapFree: prometheus.NewDesc("shmem_heap_free_bytes",
			"Usable symmetric heap bytes not in use (before growth; alignment padding counts as free).", peLabels, nil),
		level: prometheus.NewDesc("shmem_metrics_level",
			"The PE's Pcontrol level: 0 counting stopped, 1 counting with sampled latency, 2 every operation timed.", peLabels, nil),
		enabled: prometheus.NewDesc("shmem_metrics_enabled",
			"1 when the PE was started with shmem.WithMetrics; without, only this series is reported for it.", peLabels, nil),
	}
}

// Collector is a prometheus.Collector over one or several PEs. It keeps
// no counts of its own: each Collect reads the PEs' counters.
type Collector struct {
	pes []*shmem.PE
	d   descs
}

// NewCollector returns a Collector over pes. A PE started without
// shmem.WithMetrics reports only shmem_metrics_enabled 0. Two PEs with
// the same world and number (a PE and one of its contexts) would report
// the same series twice, which a registry refuses at Gather: pass PEs,
// not contexts (a PE's metrics include its contexts'). A registry takes
// one Collector, since every Collector describes the same series: give it
// every PE to export, of one world or several, and replace it
// (Unregister, then Register a new one) when that set changes.
func NewCollector(pes ...*shmem.PE) *Collector {
	return &Collector{pes: append([]*shmem.PE(nil), pes...), d: newDescs()}
}

// Describe sends the descriptions of every metric the Collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	d := &c.d
	for _, desc := range []*prometheus.Desc{d.ops, d.bytes, d.latency, d.coll, d.collTime,
		d.failed, d.conns, d.redials, d.heapUsed, d.heapFree, d.level, d.enabled} {
		ch <- desc
	}
}

// Collect sends the current value of every series of every PE.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.pes {
		collectPE(ch, &c.d, p)
	}
}

func collectPE(ch chan<- prometheus.Metric, d *descs, p *shmem.PE) {
	m, ok := p.Metrics()
	if m.PE < 0 {
		return // a nil or zero PE: nothing to report
	}
	world, pe := strconv.FormatUint(m.World, 16), strconv.Itoa(m.PE)
	if !ok {
		ch <- prometheus.MustNewConstMetric(d.enabled, prometheus.GaugeValue, 0, world, pe)
		return
	}
	ch <- prometheus.MustNewConstMetric(d.enabled, prometheus.GaugeValue, 1, world, pe)
	ch <- prometheus.MustNewConstMetric(d.level, prometheus.GaugeValue, float64(m.Level), world, pe)
	ch <- prometheus.MustNewConstMetric(d.failed, prometheus.CounterValue, float64(m.FailedPEs), world, pe)
	ch <- prometheus.MustNewConstMetric(d.conns, prometheus.CounterValue, float64(m.Connections), world, pe)
	ch <- prometheus.MustNewConstMetric(d.redials, prometheus.CounterValue, float64(m.Redials), world, pe)
	ch <- prometheus.MustNewConstMetric(d.heapUsed, prometheus.GaugeValue, float64(m.HeapInUse), world, pe)
	ch <- prometheus.MustNewConstMetric(d.heapFree, prometheus.GaugeValue, float64(max(m.HeapSize-m.HeapInUse, 0)), world, pe)
	for _, o := range m.Ops {
		ch <- prometheus.MustNewConstMetric(d.ops, prometheus.CounterValue, float64(o.Count), world, pe, o.Op, o.Path)
		ch <- prometheus.MustNewConstMetric(d.bytes, prometheus.CounterValue, float64(o.Bytes), world, pe, o.Op, o.Path)
		h := o.Latency
		buckets := make(map[float64]uint64, len(h.Bounds))
		for i, b := range h.Bounds {
			buckets[b.Seconds()] = h.Cumulative[i]
		}
		ch <- prometheus.MustNewConstHistogram(d.latency, h.Count, h.Sum.Seconds(), buckets, world, pe, o.Op, o.Path)
	}
	for _, k := range m.Collectives {
		ch <- prometheus.MustNewConstMetric(d.coll, prometheus.CounterValue, float64(k.Count), world, pe, k.Kind)
		ch <- prometheus.MustNewConstMetric(d.collTime, prometheus.CounterValue, k.Time.Seconds(), world, pe, k.Kind)
	}
}
