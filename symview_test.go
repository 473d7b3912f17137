package shmem_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
)

// TestSymAs types symmetric bytes as int32: a put through the typed view
// lands in the bytes, and views that would misalign are the zero Sym.
func TestSymAs(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		b, err := shmem.Calloc[uint8](p, 16)
		if err != nil {
			return err
		}
		w := shmem.SymAs[int32](b.Slice(4, 12))
		if w.Len() != 2 {
			return fmt.Errorf("len %d, want 2", w.Len())
		}
		if err := shmem.P(p, w.Slice(1, 2), int32(-2), 1-p.MyPE()); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if got := b.Local(p)[8:12]; got[0] != 0xfe || got[3] != 0xff {
			return fmt.Errorf("bytes %v", got)
		}
		if odd := shmem.SymAs[int32](b.Slice(1, 5)); odd.Len() != 0 {
			return errors.New("misaligned view accepted")
		}
		if _, err := shmem.G(p, shmem.SymAs[int64](b.Slice(0, 12)), 0); !errors.Is(err, shmem.ErrInvalidArgument) {
			return fmt.Errorf("partial element: %v", err)
		}
		return nil
	})
}
