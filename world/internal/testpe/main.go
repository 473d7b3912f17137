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
	"github.com/goshmem/shmem/internal/spmdcheck"
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
	if name, ok := strings.CutPrefix(role, "scenario:"); ok {
		return scenario(p, name)
	}
	switch role {
	case "spmd":
		err = spmdcheck.Run(p)
	case "die":
		err = dieOrWait(p)
	case "barriers":
		err = barriers(p, 300)
	case "fabric":
		err = fabricChecks(p)
	case "fabricdie":
		err = fabricDie(p)
	}
	if err != nil {
		return err
	}
	if err := p.Finalize(); err != nil || role != "fabric" {
		return err
	}
	return fabricLeft()
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
