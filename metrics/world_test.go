package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/metrics"
)

// TestCollectorOnRealPaths: two PEs started by unique ID in one process,
// on shared memory and on TCP (with TLS, the default), and one
// collector over both; PE 0's 100 puts of 8 bytes are counted exactly,
// under the path kind they took.
func TestCollectorOnRealPaths(t *testing.T) {
	for _, c := range []struct {
		path string
		opts []shmem.Option
	}{
		{"shm", nil},
		{"tcp", []shmem.Option{shmem.WithNetworkOnly()}},
	} {
		t.Run(c.path, func(t *testing.T) {
			uid, err := shmem.GetUniqueID(c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			pes := make([]*shmem.PE, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for r := range pes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					opts := append([]shmem.Option{shmem.WithUniqueID(uid, r, 2), shmem.WithMetrics(), shmem.WithHeapSize(8 << 20)}, c.opts...)
					pes[r], errs[r] = shmem.Init(context.Background(), opts...)
					if errs[r] == nil {
						errs[r] = putsFrom0(pes[r])
					}
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			got, err := scrape(metrics.NewCollector(pes...))
			// Finalize is collective: every PE's at once.
			for r, p := range pes {
				wg.Add(1)
				go func() { defer wg.Done(); errs[r] = p.Finalize() }()
			}
			wg.Wait()
			if err := errors.Join(append(errs, err)...); err != nil {
				t.Fatal(err)
			}
			if err := expect(got, map[string]float64{
				`shmem_ops_total{op=put,path=` + c.path + `,pe=0}`:   100,
				`shmem_bytes_total{op=put,path=` + c.path + `,pe=0}`: 800,
				`shmem_ops_total{op=quiet,path=all,pe=0}`:            2, // its own and BarrierAll's
				`shmem_collectives_total{kind=barrier,pe=0}`:         1,
				`shmem_collectives_total{kind=barrier,pe=1}`:         1,
			}); err != nil {
				t.Error(err)
			}
			// One lane each way (PE 0's puts, PE 1's barrier signal), no
			// dial repeated; none on shared memory.
			conns := map[string]float64{"shm": 0, "tcp": 1}[c.path]
			if err := expect(got, map[string]float64{
				`shmem_connections_total{pe=0}`: conns,
				`shmem_connections_total{pe=1}`: conns,
				`shmem_reconnects_total{pe=0}`:  0,
				`shmem_reconnects_total{pe=1}`:  0,
			}); err != nil {
				t.Error(err)
			}
			if _, ok := got[`shmem_ops_total{op=put,path=`+c.path+`,pe=1}`]; ok {
				t.Error("PE 1 counted puts it did not make")
			}
		})
	}
}

// putsFrom0 allocates a buffer on p's world and has PE 0 put 100 words
// into PE 1's, then Quiet; a barrier ends it on both.
func putsFrom0(p *shmem.PE) error {
	buf, err := shmem.Malloc[int64](p, 1)
	if err != nil {
		return err
	}
	if p.MyPE() == 0 {
		one := []int64{7}
		for i := 0; i < 100; i++ {
			if err := shmem.Put(p, buf, one, 1); err != nil {
				return fmt.Errorf("put %d: %w", i, err)
			}
		}
		if err := p.Quiet(); err != nil {
			return err
		}
	}
	return p.BarrierAll()
}
