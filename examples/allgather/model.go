package main

import (
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// modelBytes bounds the gathered bytes per PE when predicting, so that
// thousands of PEs fit in memory and run in seconds.
const modelBytes = 256 << 10

// loadModel resolves -model: shm, tcp or a JSON model file.
func loadModel(name string) (sim.Model, error) {
	switch name {
	case "shm":
		return sim.ModelSHM(), nil
	case "tcp":
		return sim.ModelTCP(), nil
	}
	return sim.LoadModel(name)
}

// predict runs an allgather of each size that fits modelBytes on n
// simulated PEs under model m and returns its predicted virtual time: the
// difference between a run with the allgather and one without, so that
// allocation and start-up drop out. The results are checked against the
// golden data as in a timed run.
func predict[T shmem.Elem](n int, m sim.Model, gen func(*rand.Rand) T) ([]result, error) {
	var zero T
	elem := int(unsafe.Sizeof(zero))
	var res []result
	for _, size := range sizes(n, elem) {
		if n*size*elem > modelBytes {
			break
		}
		var t [2]float64
		for i, calls := range []int{0, 1} {
			rep, err := sim.Measure(n, func(p *shmem.PE) error {
				return gatherN(p, size, calls, gen)
			}, sim.WithModel(m), sim.WithHeapSize(heapFor(n, size*elem)), sim.WithNodes(1))
			if err != nil {
				return nil, err
			}
			t[i] = float64(rep.Elapsed.Nanoseconds()) / 1e3
		}
		res = append(res, result{m: size, n: n, us: t[1] - t[0]})
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("%d PEs gather more than %d KiB per PE even at M=16", n, modelBytes>>10)
	}
	return res, nil
}

// gatherN allgathers m elements per PE calls times and checks the result.
func gatherN[T shmem.Elem](p *shmem.PE, m, calls int, gen func(*rand.Rand) T) error {
	me, n := p.MyPE(), p.NPEs()
	buf, err := shmem.Malloc[T](p, m*(n+1))
	if err != nil {
		return err
	}
	src, dst := buf.Slice(0, m), buf.Slice(m, m*(n+1))
	copy(src.Local(p), input(me, m, gen))
	for i := 0; i < calls; i++ {
		if err := shmem.FCollect(p.TeamWorld(), dst, src); err != nil {
			return err
		}
	}
	if calls == 0 {
		return nil
	}
	return golden(me, m, n, dst.Local(p), gen)
}

// heapFor sizes a simulated PE's heap for n PEs gathering b bytes each:
// the data, the team slots (a few words per PE) and room to spare.
func heapFor(n, b int) int {
	return (n+1)*b + 64*n + 4<<20
}
