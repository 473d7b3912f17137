package sim_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestMetricsUnderLazy: metrics count under the simulated network too,
// whose PEs hold no table of paths (paths are made on first use): PE 0's
// five puts of 8 bytes to PE 1 are five sim puts of 40 bytes.
func TestMetricsUnderLazy(t *testing.T) {
	err := sim.Run(2, func(p *shmem.PE) error {
		x, err := shmem.Calloc[int64](p, 1)
		if err != nil || p.MyPE() != 0 {
			return err
		}
		for i := 0; i < 5; i++ {
			if err := shmem.P(p, x, int64(i), 1); err != nil {
				return err
			}
		}
		m, _ := p.Metrics()
		for _, o := range m.Ops {
			if o.Op == "put" && o.Path == "sim" {
				if o.Count != 5 || o.Bytes != 40 {
					return fmt.Errorf("%d puts of %d bytes counted, want 5 of 40", o.Count, o.Bytes)
				}
				return nil
			}
		}
		return fmt.Errorf("no sim puts counted: %+v", m.Ops)
	}, sim.WithMetrics(), sim.WithDelivery(sim.Lazy), sim.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
}
