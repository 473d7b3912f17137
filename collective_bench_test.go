package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// BenchmarkCollectives reports per-call latency of each collective on the
// simulator for 2..64 PEs and 8 B .. 4 MiB per PE. The default run keeps
// to 8 B and 64 KiB; name a size to get the others, e.g.
// -bench 'Collectives/.*/4MiB'. Compare ns/op across the pes= values to
// see how time grows with the team size.
func BenchmarkCollectives(b *testing.B) {
	sizes := []struct {
		name  string
		bytes int
	}{{"8B", 8}, {"64KiB", 64 << 10}, {"512B", 512}, {"8KiB", 8 << 10}, {"1MiB", 1 << 20}, {"4MiB", 4 << 20}}
	for _, coll := range []string{"Broadcast", "FCollect", "Alltoall", "Reduce", "Barrier"} {
		for _, n := range []int{2, 4, 8, 16, 64} {
			for si, sz := range sizes {
				name := fmt.Sprintf("%s/pes=%d/%s", coll, n, sz.name)
				if si >= 2 && !explicit(sz.name) {
					continue
				}
				b.Run(name, func(b *testing.B) { benchColl(b, coll, n, sz.bytes) })
			}
		}
	}
}

func explicit(size string) bool {
	for _, a := range benchArgs() {
		if contains(a, size) {
			return true
		}
	}
	return false
}

func benchColl(b *testing.B, coll string, n, bytes int) {
	elems := max(1, bytes/8)
	heap := max(16<<20, 3*elems*8*n+(8<<20))
	iters := b.N
	err := sim.Run(n, func(p *shmem.PE) error {
		w := p.TeamWorld()
		src, err := shmem.Calloc[int64](p, elems*n)
		if err != nil {
			return err
		}
		dst, err := shmem.Calloc[int64](p, elems*n)
		if err != nil {
			return err
		}
		if err := w.Barrier(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < iters; i++ {
			switch coll {
			case "Broadcast":
				err = shmem.Broadcast(w, dst.Slice(0, elems), src.Slice(0, elems), 0)
			case "FCollect":
				err = shmem.FCollect(w, dst, src.Slice(0, elems))
			case "Alltoall":
				// elems per PE in total, split into n blocks.
				blk := max(1, elems/n)
				err = shmem.Alltoall(w, dst.Slice(0, blk*n), src.Slice(0, blk*n))
			case "Reduce":
				err = shmem.Reduce(w, shmem.OpSum, dst.Slice(0, elems), src.Slice(0, elems))
			case "Barrier":
				err = w.Barrier()
			}
			if err != nil {
				return err
			}
		}
		if p.MyPE() == 0 {
			b.StopTimer()
		}
		return nil
	}, sim.WithHeapSize(heap))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(bytes))
}
