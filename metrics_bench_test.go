package shmem_test

import (
	"slices"
	"testing"
	"time"

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
			b.Run(name+"/"+mode.name, func(b *testing.B) { benchOp(b, name, mode.opts...) })
		}
	}
}

// BenchmarkMetricsCost measures metrics' cost on each hot operation in
// one process: two worlds, one without metrics and one with ("on"), PE 0
// of both timing b.N operations of one, then of the other, for 101
// rounds (the order flips every round). Load from other processes thus
// falls on both alike, which separate benchmarks on a shared machine
// cannot promise. It reports the medians and the median of the rounds'
// on/off ratios. "control" runs the same with metrics off in both
// worlds: its ratio is the bias of two worlds' placement in memory and
// the noise. "level" uses one world with metrics and switches Pcontrol
// between 0 and 1 (levelCost), which has no placement bias.
//
//	go test -run '^$' -bench MetricsCost -benchtime 100000x .
func BenchmarkMetricsCost(b *testing.B) {
	for _, name := range []string{"Put8B", "Get8B", "AtomicFetchAdd", "AtomicAdd", "Quiet", "Put8KiB"} {
		for _, mode := range []string{"on", "control", "level"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				var off, on, ratio float64
				var err error
				switch mode {
				case "on":
					off, on, ratio, err = pairedCost(name, b.N, 101, sim.WithMetrics())
				case "control":
					off, on, ratio, err = pairedCost(name, b.N, 101)
				default:
					off, on, ratio, err = levelCost(name, b.N, 101)
				}
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(off, "off-ns/op")
				b.ReportMetric(on, "on-ns/op")
				b.ReportMetric(ratio, "on/off")
			})
		}
	}
}

// levelCost is pairedCost in one world with metrics, whose PE 0 runs
// the rounds at Pcontrol level 0 ("off": counting stopped) and 1 ("on"):
// the same memory, so only the counting and sampling differ.
func levelCost(name string, n, rounds int) (off, on, ratio float64, err error) {
	err = sim.Run(2, func(p *shmem.PE) error {
		ops, err := hotOps(p)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			op := ops[name]
			opAt := func(level int) func() error {
				return func() error { p.Pcontrol(level); return nil }
			}
			off, on, ratio, err = alternateWith(op, op, opAt(0), opAt(1), n, rounds)
			p.Pcontrol(1)
			if err != nil {
				return err
			}
		}
		return p.BarrierAll()
	}, sim.WithMetrics())
	return off, on, ratio, err
}

// pairedCost runs op name n times per round and world, for rounds
// rounds, in a world without metrics and one with opts, and returns the
// median ns/op of each and the median of the rounds' ratios.
func pairedCost(name string, n, rounds int, opts ...sim.Option) (off, on, ratio float64, err error) {
	err = sim.Run(2, func(pOff *shmem.PE) error {
		opsOff, err := hotOps(pOff)
		if err != nil {
			return err
		}
		if pOff.MyPE() == 0 {
			err = sim.Run(2, func(pOn *shmem.PE) error {
				opsOn, err := hotOps(pOn)
				if err != nil {
					return err
				}
				if pOn.MyPE() == 0 {
					off, on, ratio, err = alternate(opsOff[name], opsOn[name], n, rounds)
					if err != nil {
						return err
					}
				}
				return pOn.BarrierAll()
			}, opts...)
			if err != nil {
				return err
			}
		}
		return pOff.BarrierAll()
	})
	return off, on, ratio, err
}

// alternate times n calls of each op per round, flipping the order every
// round, and returns the medians (see pairedCost).
func alternate(opOff, opOn func() error, n, rounds int) (off, on, ratio float64, err error) {
	none := func() error { return nil }
	return alternateWith(opOff, opOn, none, none, n, rounds)
}

// alternateWith is alternate with a setup before each timed run of opOff
// and of opOn.
func alternateWith(opOff, opOn, setOff, setOn func() error, n, rounds int) (off, on, ratio float64, err error) {
	var offs, ons, ratios []float64
	timeN := func(set, op func() error) (float64, error) {
		if err := set(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for i := 0; i < n; i++ {
			if err := op(); err != nil {
				return 0, err
			}
		}
		return float64(time.Since(t0).Nanoseconds()) / float64(n), nil
	}
	for r := 0; r < rounds; r++ {
		var a, b float64
		if r%2 == 0 {
			if a, err = timeN(setOff, opOff); err == nil {
				b, err = timeN(setOn, opOn)
			}
		} else {
			if b, err = timeN(setOn, opOn); err == nil {
				a, err = timeN(setOff, opOff)
			}
		}
		if err != nil {
			return 0, 0, 0, err
		}
		offs, ons, ratios = append(offs, a), append(ons, b), append(ratios, b/a)
	}
	return median(offs), median(ons), median(ratios), nil
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
