package sim_test

import (
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

func TestRingPut(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 64} {
		err := sim.Run(n, func(p *shmem.PE) error {
			s, err := shmem.Calloc[int64](p, 4)
			if err != nil {
				return err
			}
			me, np := p.MyPE(), p.NPEs()
			if err := shmem.Put(p, s, []int64{int64(me), int64(me * 10)}, (me+1)%np); err != nil {
				return err
			}
			if err := p.BarrierAll(); err != nil {
				return err
			}
			got := s.Local(p)
			want := int64((me - 1 + np) % np)
			if got[0] != want || got[1] != want*10 {
				t.Errorf("n=%d PE %d got %v want %d", n, me, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
