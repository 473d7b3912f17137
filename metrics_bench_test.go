package shmem_test

import (
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestHotPathAllocatesNothingWithMetrics is TestHotPathAllocatesNothing
// with metrics on, at level 1 and at level 2 (every operation timed).
func TestHotPathAllocatesNothingWithMetrics(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		ops, err := hotOps(p)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			for _, level := range []int{1, 2} {
				p.Pcontrol(level)
				for name, op := range ops {
					var opErr error
					allocs := testing.AllocsPerRun(300, func() {
						if err := op(); err != nil {
							opErr = err
						}
					})
					if opErr != nil {
						return opErr
					}
					if allocs != 0 {
						t.Errorf("level %d, %s: %v allocs per call, want 0", level, name, allocs)
					}
				}
			}
		}
		return p.BarrierAll()
	}, sim.WithMetrics())
}

// BenchmarkMetrics runs the hot path's operations with metrics off and
// on (level 1: counted, 1 in 256 timed), side by side, for BENCHMARKS.md's
// ratios: go test -run '^$' -bench Metrics -benchmem -count 6 .
func BenchmarkMetrics(b *testing.B) {
	for _, name := range []string{"Put8B", "Get8B", "AtomicFetchAdd", "AtomicAdd", "Quiet", "Put8KiB"} {
		for _, mode := range []struct {
			name string
			opts []sim.Option
		}{{"off", nil}, {"on", []sim.Option{sim.WithMetrics()}}} {
			b.Run(name+"/"+mode.name, func(b *testing.B) { benchOpWith(b, name, mode.opts...) })
		}
	}
}

func benchOpWith(b *testing.B, name string, opts ...sim.Option) {
	err := sim.Run(2, func(p *shmem.PE) error {
		ops, err := hotOps(p)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			op := ops[name]
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op(); err != nil {
					return err
				}
			}
			b.StopTimer()
		}
		return p.BarrierAll()
	}, opts...)
	if err != nil {
		b.Fatal(err)
	}
}
