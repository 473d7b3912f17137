package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
)

func TestReduceComplex(t *testing.T) {
	const n = 4
	run(t, n, func(p *shmem.PE) error {
		me := p.MyPE()
		val := func(r, i int) complex128 { return complex(float64(r+i+1), float64(r-i)) }
		var sum, prod [3]complex128
		for i := range sum {
			sum[i], prod[i] = 0, 1
			for r := 0; r < n; r++ {
				sum[i] += val(r, i)
				prod[i] *= val(r, i)
			}
		}
		src32, err := shmem.Malloc[float32](p, 6)
		if err != nil {
			return err
		}
		src64, err := shmem.Malloc[float64](p, 6)
		if err != nil {
			return err
		}
		dst32, err := shmem.Malloc[float32](p, 6)
		if err != nil {
			return err
		}
		for _, op := range []shmem.Op{shmem.OpSum, shmem.OpProd} {
			c32 := shmem.ComplexView[float32, complex64](src32.Local(p))
			c64 := shmem.ComplexView[float64, complex128](src64.Local(p))
			for i := range c32 {
				c32[i], c64[i] = complex64(val(me, i)), val(me, i)
			}
			if err := p.BarrierAll(); err != nil {
				return err
			}
			if err := shmem.ReduceComplex(p.TeamWorld(), op, dst32, src32); err != nil {
				return err
			}
			if err := shmem.ReduceComplex(p.TeamWorld(), op, src64, src64); err != nil { // in place
				return err
			}
			exp := sum
			if op == shmem.OpProd {
				exp = prod
			}
			g32 := shmem.ComplexView[float32, complex64](dst32.Local(p))
			g64 := shmem.ComplexView[float64, complex128](src64.Local(p))
			for i := range exp {
				if g32[i] != complex64(exp[i]) || g64[i] != exp[i] {
					return fmt.Errorf("op %d element %d: complex64 %v, complex128 %v, want %v", op, i, g32[i], g64[i], exp[i])
				}
			}
		}
		if err := wantErr(shmem.ReduceComplex(p.TeamWorld(), shmem.OpMax, dst32, src32), shmem.ErrInvalidArgument, "ReduceComplex", "OpSum"); err != nil {
			return err
		}
		return wantErr(shmem.ReduceComplex(p.TeamWorld(), shmem.OpSum, dst32, src32.Slice(0, 5)), shmem.ErrInvalidArgument, "ReduceComplex", "whole complex")
	})
}
