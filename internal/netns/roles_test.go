package netns_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/spmdcheck"
)

// Exit codes of a PE process, which the tests assert.
const (
	exitOK         = 0
	exitError      = 1
	exitPEFailed   = 3  // an operation failed with ErrPEFailed; Finalize was clean, nothing leaked
	exitFinalize   = 4  // ErrPEFailed, but Finalize failed
	exitLeak       = 5  // a goroutine or socket outlived Finalize
	exitInitFailed = 10 // Init refused (the intruder's expected end)
)

// The tests re-execute this binary as PEs inside the namespaces: with
// GOSHMEM_NETNS_ROLE set, TestMain runs that role instead of the tests.
func runRole(role string) int {
	opts := []shmem.Option{shmem.WithTimeout(30 * time.Second)}
	if v := os.Getenv("TEST_INIT_TIMEOUT"); v != "" {
		d, _ := time.ParseDuration(v)
		opts = append(opts, shmem.WithTimeout(d))
	}
	if seeds := os.Getenv("TEST_SEEDS"); seeds != "" {
		npes, _ := strconv.Atoi(os.Getenv("SHMEM_NPES"))
		opts = append(opts, shmem.WithSeeds(strings.Split(seeds, ","), npes))
	}
	p, err := shmem.Init(context.Background(), opts...)
	if err != nil {
		fmt.Printf("INIT FAILED: %v\n", err)
		return exitInitFailed
	}
	switch role {
	case "spmd":
		err = spmdcheck.Run(p)
	case "hold":
		// Formed; wait until the test has tried its intruders.
		if err = p.BarrierAll(); err == nil {
			fmt.Println("READY")
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
			err = spmdcheck.Run(p)
		}
	case "wait":
		err = waitForFailure(p)
	case "exit":
		err = globalExit(p)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if status, ok := shmem.ExitStatus(err); ok {
		fmt.Printf("EXIT STATUS %d: %v\n", status, err)
		return status
	}
	code := exitOK
	if err != nil {
		fmt.Printf("FAILED %d: %v\n", time.Now().UnixNano(), err)
		code = exitError
		if errors.Is(err, shmem.ErrPEFailed) {
			code = exitPEFailed
		}
	}
	if ferr := p.Finalize(); ferr != nil && code != exitError {
		fmt.Printf("FINALIZE: %v\n", ferr)
		if err == nil {
			return exitError
		}
		return exitFinalize
	}
	if code != exitError {
		if lerr := leaks(); lerr != nil {
			fmt.Printf("LEAK: %v\n", lerr)
			return exitLeak
		}
	}
	return code
}

// waitForFailure: once all are up, the victim (TEST_VICTIM) keeps reading
// from a peer while the others wait in a barrier that it never joins, so
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
	fmt.Println("READY")
	victim, _ := strconv.Atoi(os.Getenv("TEST_VICTIM"))
	peer := (victim + 1) % p.NPEs()
	switch {
	case p.MyPE() == victim:
	case os.Getenv("TEST_READERS") == "1":
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

// globalExit: PE TEST_EXITER ends the world with status 42 while the
// others wait in a barrier.
func globalExit(p *shmem.PE) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if exiter, _ := strconv.Atoi(os.Getenv("TEST_EXITER")); p.MyPE() == exiter {
		p.GlobalExit(42)
		select {} // the exit notice ends this process too
	}
	return p.BarrierAll()
}
