// Command inlined instantiates goshmem's generic operations for int64 in
// a package of its own, as a user's program does. TestFastPathsInline
// builds it and reads its machine code: the mapped fast paths must call
// nothing of goshmem's out of line. It is never run.
package main

import (
	"os"

	shmem "github.com/goshmem/shmem"
)

// main calls ops8 under a condition the linker cannot decide, so that it
// keeps every instantiation.
func main() {
	if len(os.Args) > 1<<20 {
		_, _ = ops8(nil, shmem.Sym[int64]{}, nil)
	}
}

func ops8(p *shmem.PE, s shmem.Sym[int64], buf []int64) (sum int64, err error) {
	err = shmem.Put(p, s, buf, 1)
	err = shmem.Get(p, buf, s, 1)
	err = shmem.P(p, s, 1, 1)
	v, _ := shmem.G(p, s, 1)
	sum += v
	v, _ = shmem.AtomicFetch(p, s, 1)
	sum += v
	err = shmem.AtomicSet(p, s, 1, 1)
	v, _ = shmem.AtomicCompareSwap(p, s, 0, 1, 1)
	sum += v
	v, _ = shmem.AtomicFetchInc(p, s, 1)
	sum += v
	err = shmem.AtomicInc(p, s, 1)
	v, _ = shmem.AtomicFetchAdd(p, s, 1, 1)
	sum += v
	err = shmem.AtomicAdd(p, s, 1, 1)
	v, _ = shmem.AtomicSwap(p, s, 1, 1)
	sum += v
	return sum, err
}
