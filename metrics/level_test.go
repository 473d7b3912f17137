package metrics_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/metrics"
	"github.com/goshmem/shmem/sim"
)

// TestPcontrolLevels: level 0 stops counting, 2 times every operation,
// 1 samples again; the level is reported.
func TestPcontrolLevels(t *testing.T) {
	err := sim.Run(2, func(p *shmem.PE) error {
		buf, err := shmem.Malloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			one := make([]int64, 1)
			puts := func(n int) error {
				for i := 0; i < n; i++ {
					if err := shmem.Put(p, buf, one, 1); err != nil {
						return err
					}
				}
				return nil
			}
			steps := []struct {
				level, puts        int
				wantOps, wantTimed float64
			}{
				{0, 7, 0, 0},        // nothing counted
				{2, 10, 10, 10},     // every put timed
				{1, 1100, 1110, 11}, // and the 1025th put is sampled
			}
			c := metrics.NewCollector(p)
			for _, s := range steps {
				p.Pcontrol(s.level)
				if err := puts(s.puts); err != nil {
					return err
				}
				got, err := scrape(c)
				if err != nil {
					return err
				}
				want := map[string]float64{`shmem_metrics_level{pe=0}`: float64(s.level)}
				if s.wantOps > 0 {
					want[`shmem_ops_total{op=put,path=sim,pe=0}`] = s.wantOps
					want[`shmem_op_latency_seconds{op=put,path=sim,pe=0}_count`] = s.wantTimed
				} else if _, ok := got[`shmem_ops_total{op=put,path=sim,pe=0}`]; ok {
					return fmt.Errorf("level 0 counted puts")
				}
				if err := expect(got, want); err != nil {
					return fmt.Errorf("level %d: %w", s.level, err)
				}
			}
		}
		return p.BarrierAll()
	}, sim.WithMetrics())
	if err != nil {
		t.Fatal(err)
	}
}

// TestFailuresDetected: the survivors of a PE killed mid-run report one
// failure detected.
func TestFailuresDetected(t *testing.T) {
	var pes [3]*shmem.PE
	_ = sim.Run(3, func(p *shmem.PE) error {
		pes[p.MyPE()] = p
		for i := 0; i < 20; i++ {
			if err := p.BarrierAll(); errors.Is(err, shmem.ErrPEFailed) {
				return nil // a survivor that failed would count as a second failure
			} else if err != nil {
				return err
			}
		}
		return errors.New("PE 1 was not killed")
	}, sim.WithFailure(1, 10), sim.WithSeed(5), sim.WithMetrics())
	got, err := scrape(metrics.NewCollector(pes[0], pes[2]))
	if err != nil {
		t.Fatal(err)
	}
	if err := expect(got, map[string]float64{
		`shmem_pe_failures_detected_total{pe=0}`: 1,
		`shmem_pe_failures_detected_total{pe=2}`: 1,
	}); err != nil {
		t.Error(err)
	}
}

// TestWithoutMetrics: a PE started without them reports only that.
func TestWithoutMetrics(t *testing.T) {
	err := sim.Run(1, func(p *shmem.PE) error {
		got, err := scrape(metrics.NewCollector(p))
		if err != nil {
			return err
		}
		if len(got) != 1 || got[`shmem_metrics_enabled{pe=0}`] != 0 {
			return fmt.Errorf("scrape %v, want only shmem_metrics_enabled 0", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestZeroPE: a nil PE has no metrics and the collector skips it.
func TestZeroPE(t *testing.T) {
	var p *shmem.PE
	if m, ok := p.Metrics(); ok || m.PE != -1 {
		t.Errorf("nil PE: Metrics() = %+v, %v; want PE -1, false", m, ok)
	}
	got, err := scrape(metrics.NewCollector(p, new(shmem.PE)))
	if err != nil || len(got) != 0 {
		t.Errorf("scrape of nil and zero PEs: %v, %v; want nothing", got, err)
	}
}
