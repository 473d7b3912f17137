package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/metrics"
	"github.com/goshmem/shmem/sim"
)

// A service registers one Collector for its PEs on a registry of its own
// (served with promhttp.HandlerFor in a real service) and reads the
// series back; here PE 0 of a simulated world puts 100 words.
func ExampleNewCollector() {
	_ = sim.Run(2, func(p *shmem.PE) error {
		buf, err := shmem.Malloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			for i := 0; i < 100; i++ {
				if err := shmem.Put(p, buf, []int64{int64(i)}, 1); err != nil {
					return err
				}
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(metrics.NewCollector(p))
			fams, err := reg.Gather()
			if err != nil {
				return err
			}
			for _, f := range fams {
				if f.GetName() != "shmem_bytes_total" {
					continue
				}
				for _, m := range f.GetMetric() {
					fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetLabel()[1].GetValue(), m.GetCounter().GetValue())
				}
			}
		}
		return p.BarrierAll()
	}, sim.WithMetrics())
	// Output:
	// shmem_bytes_total put sim 800
}
