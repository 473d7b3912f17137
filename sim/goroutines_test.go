package sim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestLazyQuietOffTurn: a PE's second goroutine puts and quiets while its
// first waits on the bell for what the other PE answers, in Lazy delivery.
// The second goroutine's calls run off the schedule: its Quiet must land
// its writes without handing over a baton another PE holds (it once did,
// and the world hung), and once the first goroutine parks on the bell, a
// second one parked for the PE's turn must run on rather than wait for a
// turn only its own writes can bring (it once waited, and the simulator
// reported a deadlock).
func TestLazyQuietOffTurn(t *testing.T) {
	const rounds = 20
	for seed := int64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			var tw strings.Builder
			defer func() {
				if t.Failed() {
					t.Log(tw.String())
				}
			}()
			err := sim.Run(2, func(p *shmem.PE) error {
				data, _ := shmem.Calloc[int64](p, 2*rounds)
				done, _ := shmem.Calloc[int64](p, 1)
				flag, err := shmem.Calloc[int64](p, 1)
				if err != nil {
					return err
				}
				if p.MyPE() == 1 {
					if err := shmem.WaitUntil(p, done, shmem.CmpEQ, 1); err != nil {
						return err
					}
					for i, v := range data.Local(p) {
						if v != int64(i+1) {
							return fmt.Errorf("data[%d] = %d after the sender's Quiet, want %d", i, v, i+1)
						}
					}
					if err := shmem.P(p, flag, 1, 0); err != nil {
						return err
					}
					return p.Quiet()
				}
				errc := make(chan error, 1)
				go func() {
					for i := 0; i < 2*rounds; i += 2 {
						for _, j := range []int{i, i + 1} {
							if err := shmem.P(p, data.Slice(j, j+1), int64(j+1), 1); err != nil {
								errc <- err
								return
							}
						}
						if err := p.Quiet(); err != nil {
							errc <- err
							return
						}
					}
					if err := shmem.P(p, done, 1, 1); err != nil {
						errc <- err
						return
					}
					errc <- p.Quiet()
				}()
				if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
					return err
				}
				return <-errc
			}, sim.WithDelivery(sim.Lazy), sim.WithSeed(seed), sim.WithTrace(&tw))
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
