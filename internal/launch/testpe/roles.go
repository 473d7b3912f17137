package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/internal/spmdcheck"
	"github.com/goshmem/shmem/transport/udma"
)

// runRole runs one role (see launchtest's Role constants).
func runRole(p *shmem.PE, role string) error {
	if name, ok := strings.CutPrefix(role, lt.RoleScenario); ok {
		return scenario(p, name)
	}
	switch role {
	case lt.RoleSPMD:
		return spmdcheck.Run(p)
	case lt.RoleBarriers:
		return barriers(p, 300)
	case lt.RoleGiveUp:
		return giveUp(p)
	case lt.RoleDie:
		return die(p)
	case lt.RoleWait:
		return waitForFailure(p)
	case lt.RoleHold:
		return hold(p)
	case lt.RoleQuit:
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == who(p) {
			os.Exit(0) // without Finalize: the others' barrier fails
		}
		return p.BarrierAll()
	case lt.RolePauseLoop:
		return pauseLoop(p)
	case lt.RoleDieAlloc:
		return dieAlloc(p)
	case lt.RoleExit:
		return globalExit(p)
	case lt.RoleFinalizeFail:
		if err := p.Finalize(); err != nil {
			return err
		}
		if p.MyPE() == who(p) {
			os.Exit(lt.FailStatus)
		}
		return nil
	case lt.RoleFinalizeEarly:
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == who(p) {
			return p.Finalize()
		}
		return p.BarrierAll()
	case lt.RoleHello:
		return hello(p)
	case lt.RoleStubborn:
		return stubborn(p)
	case lt.RoleBlock:
		return block(p, false)
	case lt.RoleHang:
		return block(p, true)
	case lt.RoleCPUs:
		return cpus()
	case lt.RoleFabric:
		return fabricChecks(p)
	case lt.RoleFabricDie:
		return fabricDie(p)
	case lt.RoleFabricStatics:
		return fabricStatics(p)
	case lt.RoleFault:
		return faultLoop(p, os.Getenv(lt.EnvFaultLoop))
	case lt.RoleGrow:
		return grow(p)
	case lt.RoleAllocs:
		return allocs(p)
	}
	return fmt.Errorf("unknown role %q", role)
}

// die: PE who exits without Finalize once everyone is up; the others wait
// in a barrier that can only end with ErrPEFailed, then until their
// failure handler (PE.OnFailure) has named the victim, which it prints.
func die(p *shmem.PE) error {
	victim := who(p)
	named := make(chan struct{})
	p.OnFailure(func(pe int, reason string) {
		if pe == victim {
			fmt.Printf("OnFailure: PE %d: %s\n", pe, reason)
			close(named)
		}
	})
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == victim {
		os.Exit(lt.DieStatus)
	}
	err := p.BarrierAll()
	select {
	case <-named:
	case <-time.After(time.Minute):
		err = errors.Join(err, fmt.Errorf("OnFailure did not name PE %d within a minute", victim))
	}
	return err
}

// pauseLoop prints READY, then runs broadcasts of PE 0's stop flag in a
// loop until PE 0's stdin closes; PE who prints LOOPING every 50 rounds,
// so that a test that paused it knows the loop runs again.
func pauseLoop(p *shmem.PE) error {
	src, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	dst, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	var stop atomic.Bool
	if p.MyPE() == 0 {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop.Store(true)
		}()
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	ready()
	for i := 1; ; i++ {
		if stop.Load() {
			src.Local(p)[0] = 1
		}
		if err := shmem.Broadcast(p.TeamWorld(), dst, src, 0); err != nil {
			return err
		}
		if src.Local(p)[0] == 1 || p.MyPE() != 0 && dst.Local(p)[0] == 1 {
			return nil
		}
		if p.MyPE() == who(p) && i%50 == 0 {
			fmt.Println(lt.Looping)
		}
	}
}

// dieAlloc: PE who exits after a barrier while the others allocate and
// free in a loop, each a collective agreement through rank 0's
// coordinator: with who = 0 the coordinator dies with it, and the loop
// must end with ErrPEFailed naming PE 0 at once, not at the agreement
// timeout.
func dieAlloc(p *shmem.PE) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == who(p) {
		os.Exit(lt.DieStatus)
	}
	for {
		s, err := shmem.Calloc[int64](p, 64)
		if err != nil {
			return err
		}
		if err := shmem.Free(p, s); err != nil {
			return err
		}
	}
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

// waitForFailure: once all are up, the victim (who) keeps reading from
// the next PE while the others wait in a barrier that it never joins, so
// every PE ends only by noticing a failure. With TEST_READERS=1 the others
// keep reading from the victim instead: their operations, not only their
// waits, must end with ErrPEFailed.
func waitForFailure(p *shmem.PE) error {
	x, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	ready()
	victim := who(p)
	peer := (victim + 1) % p.NPEs()
	switch {
	case p.MyPE() == victim:
	case os.Getenv(lt.EnvReaders) == "1":
		peer = victim
	default:
		return p.BarrierAll()
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		if _, err := shmem.G(p, x, peer); err != nil {
			return err
		}
	}
	return nil
}

// hold: formed, wait until the test closes stdin (it has tried its
// intruders meanwhile), then check the world still works.
func hold(p *shmem.PE) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	ready()
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return spmdcheck.Run(p)
}

// globalExit: PE who ends the world while the odd PEs read in a loop from
// the odd PE two ranks on (another receiver of the notice, which may end
// its process before the reader has the notice: the reader sees the
// connection drop first and must still report the exit, not a failure)
// and the even PEs wait in a barrier.
func globalExit(p *shmem.PE) error {
	word, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == who(p) {
		p.GlobalExit(lt.GlobalExitStatus)
		select {} // the exit notice ends this process too
	}
	if p.MyPE()%2 == 0 {
		return p.BarrierAll()
	}
	from := (p.MyPE() + 2) % p.NPEs()
	for {
		if _, err := shmem.G(p, word, from); err != nil {
			return err
		}
	}
}

func hello(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	if err := p.BarrierAll(); err != nil {
		return err
	}
	fmt.Printf("hello %d of %d\n", me, n)
	fmt.Fprintf(os.Stderr, "stderr line from %d\n", me)
	return p.BarrierAll()
}

// stubborn: PE who exits FailStatus after a barrier; the others ignore
// SIGTERM and block, so only SIGKILL ends them.
func stubborn(p *shmem.PE) error {
	signal.Ignore(syscall.SIGTERM)
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == who(p) {
		os.Exit(lt.FailStatus)
	}
	ready()
	select {}
}

// block prints READY and blocks; with segment it first leaves a segment
// of its job in /dev/shm, as a crash in start-up would.
func block(p *shmem.PE, segment bool) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if segment {
		uid, err := shmem.ParseUniqueID(os.Getenv("SHMEM_UNIQUE_ID"))
		if err != nil {
			return err
		}
		if _, err := udma.Create(uid.JobName(), p.NPEs()+p.MyPE(), 4096); err != nil {
			return err
		}
	}
	ready()
	select {}
}

// cpus prints the CPUs this PE may run on.
func cpus() error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			fmt.Printf("cpus=%s\n", strings.TrimSpace(v))
		}
	}
	return nil
}

// grow runs spmdcheck.Grow on the heap size the environment gives.
func grow(p *shmem.PE) error {
	n, err := bootstrap.ParseSize(os.Getenv(bootstrap.EnvSymmetricSize))
	if err != nil {
		return err
	}
	return spmdcheck.Grow(p, int(n))
}
