package metrics_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/metrics"
	"github.com/goshmem/shmem/sim"
)

// scrape gathers c through a registry of its own and returns every
// sample by "name{label=value,...}" (labels sorted, world left out); a
// histogram gives its _count and _sum.
func scrape(c prometheus.Collector) (map[string]float64, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	fams, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				if l.GetName() != "world" {
					ls = append(ls, l.GetName()+"="+l.GetValue())
				}
			}
			sort.Strings(ls)
			key := f.GetName() + "{" + strings.Join(ls, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
				out[key+"_sum"] = m.GetHistogram().GetSampleSum()
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			default:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out, nil
}

// expect checks that every key of want has that value in got.
func expect(got, want map[string]float64) error {
	var bad []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			bad = append(bad, fmt.Sprintf("%s = %v (present %v), want %v", k, g, ok, v))
		}
	}
	slices.Sort(bad)
	if bad != nil {
		return fmt.Errorf("%s", strings.Join(bad, "\n"))
	}
	return nil
}

// TestCollectorCountsAWorkload scrapes PE 0 of a simulated world after a
// known workload: 100 puts of 8 bytes, 10 gets of 16, 5 fetch-adds, 3
// adds, 2 put-signals of 8, 4 puts on a destroyed context, one Quiet,
// one Fence, one BarrierAll, and a 1024-element allocation.
func TestCollectorCountsAWorkload(t *testing.T) {
	var pe0 *shmem.PE
	err := sim.Run(2, func(p *shmem.PE) error {
		before, _ := p.Metrics()
		buf, err := shmem.Malloc[int64](p, 1024)
		if err != nil {
			return err
		}
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		after, _ := p.Metrics()
		if got := after.HeapInUse - before.HeapInUse; got != 1024*8+8 {
			return fmt.Errorf("heap in use grew by %d, want %d", got, 1024*8+8)
		}
		if p.MyPE() == 0 {
			pe0 = p
			if err := workload(p, buf, sig); err != nil {
				return err
			}
			got, err := scrape(metrics.NewCollector(p))
			if err != nil {
				return err
			}
			if err := expect(got, map[string]float64{
				`shmem_metrics_enabled{pe=0}`:                          1,
				`shmem_metrics_level{pe=0}`:                            1,
				`shmem_ops_total{op=put,path=sim,pe=0}`:                104,
				`shmem_bytes_total{op=put,path=sim,pe=0}`:              832,
				`shmem_ops_total{op=get,path=sim,pe=0}`:                10,
				`shmem_bytes_total{op=get,path=sim,pe=0}`:              160,
				`shmem_ops_total{op=atomic_fetch,path=sim,pe=0}`:       5,
				`shmem_bytes_total{op=atomic_fetch,path=sim,pe=0}`:     40,
				`shmem_ops_total{op=atomic,path=sim,pe=0}`:             3,
				`shmem_ops_total{op=put_signal,path=sim,pe=0}`:         2,
				`shmem_bytes_total{op=put_signal,path=sim,pe=0}`:       32,
				`shmem_ops_total{op=quiet,path=all,pe=0}`:              2, // the context's Destroy completes it with a Quiet
				`shmem_ops_total{op=fence,path=all,pe=0}`:              1,
				`shmem_op_latency_seconds{op=put,path=sim,pe=0}_count`: 2, // the 1st of the PE's puts and the 1st of the context's
				`shmem_op_latency_seconds{op=get,path=sim,pe=0}_count`: 1,
				`shmem_pe_failures_detected_total{pe=0}`:               0,
				`shmem_heap_in_use_bytes{pe=0}`:                        float64(after.HeapInUse),
				`shmem_heap_free_bytes{pe=0}`:                          float64(after.HeapSize - after.HeapInUse),
			}); err != nil {
				return err
			}
			if _, ok := got[`shmem_collectives_total{kind=barrier,pe=0}`]; ok {
				return fmt.Errorf("a barrier counted before any ran")
			}
		}
		return p.BarrierAll()
	}, sim.WithMetrics())
	if err != nil {
		t.Fatal(err)
	}
	got, err := scrape(metrics.NewCollector(pe0))
	if err != nil {
		t.Fatal(err)
	}
	if err := expect(got, map[string]float64{`shmem_collectives_total{kind=barrier,pe=0}`: 1}); err != nil {
		t.Error(err)
	}
}

func workload(p *shmem.PE, buf shmem.Sym[int64], sig shmem.Sym[uint64]) error {
	one, two := make([]int64, 1), make([]int64, 2)
	for i := 0; i < 100; i++ {
		if err := shmem.Put(p, buf, one, 1); err != nil {
			return err
		}
	}
	for i := 0; i < 10; i++ {
		if err := shmem.Get(p, two, buf, 1); err != nil {
			return err
		}
	}
	for i := 0; i < 5; i++ {
		if _, err := shmem.AtomicFetchAdd(p, buf, 1, 1); err != nil {
			return err
		}
	}
	for i := 0; i < 3; i++ {
		if err := shmem.AtomicAdd(p, buf, 1, 1); err != nil {
			return err
		}
	}
	for i := 0; i < 2; i++ {
		if err := shmem.PutSignal(p, buf, one, sig, 1, shmem.SignalAdd, 1); err != nil {
			return err
		}
	}
	ctx, err := p.CreateCtx()
	if err != nil {
		return err
	}
	for i := 0; i < 4; i++ {
		if err := shmem.Put(ctx, buf, one, 1); err != nil {
			return err
		}
	}
	if err := ctx.Destroy(); err != nil {
		return err
	}
	p.Fence()
	return p.Quiet()
}

// TestCollectivesAndLocksAreNotOperations: the fences collectives issue
// and the atomics of locks are not counted as the program's operations
// (README, "Metrics"); the Quiet that ClearLock completes with is, as a
// Quiet, and a Fence the program calls is, once. They used to add 1-3
// fences per collective (a different number on the root) and 2 fetching
// atomics per SetLock and ClearLock.
func TestCollectivesAndLocksAreNotOperations(t *testing.T) {
	err := sim.Run(2, func(p *shmem.PE) error {
		src, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		dst, err := shmem.Calloc[int64](p, 8)
		if err != nil {
			return err
		}
		lock, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		w := p.TeamWorld()
		for _, f := range []func() error{
			func() error { return shmem.Broadcast(w, dst.Slice(0, 4), src, 0) },
			func() error { return shmem.FCollect(w, dst, src) },
			func() error { return shmem.Reduce(w, shmem.OpSum, dst.Slice(0, 4), src) },
			func() error { return shmem.Alltoall(w, dst.Slice(0, 4), src) },
			func() error { return shmem.SetLock(p, lock) },
			func() error { return shmem.ClearLock(p, lock) },
			func() error { p.Fence(); return nil },
		} {
			if err := f(); err != nil {
				return err
			}
		}
		got, err := scrape(metrics.NewCollector(p))
		if err != nil {
			return err
		}
		me := p.MyPE()
		want := map[string]float64{
			fmt.Sprintf(`shmem_ops_total{op=fence,path=all,pe=%d}`, me): 1,
			fmt.Sprintf(`shmem_ops_total{op=quiet,path=all,pe=%d}`, me): 1, // ClearLock's
		}
		if err := expect(got, want); err != nil {
			return fmt.Errorf("PE %d: %w", me, err)
		}
		for k, v := range got {
			if strings.HasPrefix(k, "shmem_ops_total{op=atomic") && v != 0 {
				return fmt.Errorf("PE %d: %s = %v: a lock's atomics were counted", me, k, v)
			}
		}
		return p.BarrierAll()
	}, sim.WithMetrics())
	if err != nil {
		t.Fatal(err)
	}
}
