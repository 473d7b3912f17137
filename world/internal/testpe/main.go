// Command testpe is the PE program of the world package's multi-process
// tests: it joins the world its environment describes and runs the role
// GOSHMEM_TEST_ROLE names. The tests build it without the race detector:
// protoactor-go's remote layer races with itself when a peer disconnects
// during Shutdown (endpointManager.stop against removeEndpoint, upstream),
// which would fail every child for a bug that is not goshmem's.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goshmem/shmem"
)

func main() {
	role := os.Getenv("GOSHMEM_TEST_ROLE")
	if err := runRole(role); err != nil {
		fmt.Fprintf(os.Stderr, "role %s: %v\n", role, err)
		if errors.Is(err, shmem.ErrPEFailed) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

func runRole(role string) error {
	ctx := context.Background()
	var opts []shmem.Option
	if os.Getenv("TEST_NO_TLS") == "1" {
		opts = append(opts, shmem.WithoutTLS())
	}
	if dir := os.Getenv("TEST_TLS_PEM"); dir != "" {
		cfg, err := shmem.LoadTLS(dir+"/ca.pem", dir+"/pe.pem", dir+"/pe.key", "")
		if err != nil {
			return err
		}
		opts = append(opts, shmem.WithTLS(cfg))
	}
	if seeds := os.Getenv("TEST_GOSSIP_SEEDS"); seeds != "" {
		n, _ := strconv.Atoi(os.Getenv("TEST_GOSSIP_NPES"))
		opts = append(opts, shmem.WithSeeds(strings.Split(seeds, ","), n))
	}
	p, err := shmem.Init(ctx, opts...)
	if err != nil {
		return err
	}
	switch role {
	case "spmd":
		err = spmd(p)
	case "die":
		err = dieOrWait(p)
	case "barriers":
		err = barriers(p, 300)
	}
	if err != nil {
		return err
	}
	return p.Finalize()
}

// spmd checks RMA, atomics, signals and a collective across processes.
func spmd(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	ring, err := shmem.Calloc[int64](p, 4)
	if err != nil {
		return err
	}
	counter, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := shmem.Put(p, ring, []int64{int64(me), int64(me * me)}, (me+1)%n); err != nil {
		return err
	}
	for i := 0; i < 100; i++ {
		if err := shmem.AtomicAdd(p, counter, 1, 0); err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	prev := (me - 1 + n) % n
	if got := ring.Local(p); got[0] != int64(prev) || got[1] != int64(prev*prev) {
		return fmt.Errorf("ring put: PE %d holds %v, want [%d %d]", me, got[:2], prev, prev*prev)
	}
	if v, err := shmem.G(p, counter, 0); err != nil || v != int64(100*n) {
		return fmt.Errorf("counter at PE 0 = %d (%v), want %d", v, err, 100*n)
	}
	src, err := shmem.Malloc[int32](p, 2)
	if err != nil {
		return err
	}
	dst, err := shmem.Malloc[int32](p, 2*n)
	if err != nil {
		return err
	}
	copy(src.Local(p), []int32{int32(me), int32(-me)})
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if err := shmem.FCollect(p.TeamWorld(), dst, src); err != nil {
		return err
	}
	for r, v := range dst.Local(p) {
		want := int32(r / 2)
		if r%2 == 1 {
			want = -want
		}
		if v != want {
			return fmt.Errorf("fcollect[%d] = %d, want %d", r, v, want)
		}
	}
	sig, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	data, err := shmem.Calloc[int64](p, 512)
	if err != nil {
		return err
	}
	payload := make([]int64, 512)
	for i := range payload {
		payload[i] = int64(me*1000 + i)
	}
	if err := shmem.PutSignal(p, data, payload, sig, 1, shmem.SignalSet, (me+1)%n); err != nil {
		return err
	}
	if _, err := shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1); err != nil {
		return err
	}
	if got := data.Local(p); got[511] != int64(prev*1000+511) {
		return fmt.Errorf("put-signal data %d, want %d", got[511], prev*1000+511)
	}
	return p.BarrierAll()
}

// dieOrWait: the last PE exits without Finalize once everyone is up; the
// others wait in a barrier that can only end with ErrPEFailed.
func dieOrWait(p *shmem.PE) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == p.NPEs()-1 {
		os.Exit(7)
	}
	return p.BarrierAll()
}

// barriers runs n barriers, each checked by a counter every PE bumps on
// PE 0: with more PEs than cores it only finishes if waiting PEs give the
// CPU to the PEs they wait for.
func barriers(p *shmem.PE, n int) error {
	c, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if err := shmem.AtomicAdd(p, c, 1, 0); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if v := c.Local(p)[0]; v != int64(i*p.NPEs()) {
				return fmt.Errorf("after barrier %d the counter is %d, want %d", i, v, i*p.NPEs())
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
	}
	return nil
}
