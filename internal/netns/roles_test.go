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

	"go.uber.org/goleak"

	"github.com/goshmem/shmem"
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
		err = spmd(p)
	case "hold":
		// Formed; wait until the test has tried its intruders.
		if err = p.BarrierAll(); err == nil {
			fmt.Println("READY")
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
			err = spmd(p)
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
		if os.Getenv("TEST_LEAKS") == "report" {
			// Known issue: see failureCase.
			if n := sockets(); n > 0 {
				fmt.Printf("LINGER: %d sockets open after Finalize\n", n)
			}
		} else if lerr := leaks(); lerr != nil {
			fmt.Printf("LEAK: %v\n", lerr)
			return exitLeak
		}
	}
	return code
}

// waitForFailure: once all are up, the victim (TEST_VICTIM) keeps reading
// from a peer while the others wait in a barrier that it never joins, so
// every PE ends only by noticing a failure.
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
	if p.MyPE() != victim {
		return p.BarrierAll()
	}
	peer := (victim + 1) % p.NPEs()
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

// spmd checks RMA, atomics, a collective, a reduction and put-signal.
func spmd(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	ring, err := shmem.Calloc[int64](p, 2)
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
	// Fetch-add from every PE on one word of PE n-1: each PE's fetched
	// values rise, and the word ends at the sum.
	const adds = 50
	last := int64(-1)
	for i := 0; i < adds; i++ {
		v, err := shmem.AtomicFetchAdd(p, counter, 1, n-1)
		if err != nil {
			return err
		}
		if v <= last || v >= adds*int64(n) {
			return fmt.Errorf("fetch-add %d returned %d after %d", i, v, last)
		}
		last = v
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	prev := (me - 1 + n) % n
	if got := ring.Local(p); got[0] != int64(prev) || got[1] != int64(prev*prev) {
		return fmt.Errorf("ring put: PE %d holds %v, want [%d %d]", me, got, prev, prev*prev)
	}
	if v, err := shmem.G(p, counter, n-1); err != nil || v != adds*int64(n) {
		return fmt.Errorf("counter at PE %d = %d (%v), want %d", n-1, v, err, adds*n)
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
	for i, v := range dst.Local(p) {
		want := int32(i / 2)
		if i%2 == 1 {
			want = -want
		}
		if v != want {
			return fmt.Errorf("fcollect[%d] = %d, want %d", i, v, want)
		}
	}
	sum, err := shmem.Malloc[int64](p, 1)
	if err != nil {
		return err
	}
	one, err := shmem.Malloc[int64](p, 1)
	if err != nil {
		return err
	}
	one.Local(p)[0] = int64(me + 1)
	if err := shmem.Reduce(p.TeamWorld(), shmem.OpSum, sum, one); err != nil {
		return err
	}
	if got, want := sum.Local(p)[0], int64(n*(n+1)/2); got != want {
		return fmt.Errorf("sum reduce = %d, want %d", got, want)
	}
	sig, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	data, err := shmem.Calloc[int64](p, 4096)
	if err != nil {
		return err
	}
	payload := make([]int64, 4096)
	for i := range payload {
		payload[i] = int64(me*100000 + i)
	}
	if err := shmem.PutSignal(p, data, payload, sig, 1, shmem.SignalSet, (me+1)%n); err != nil {
		return err
	}
	if _, err := shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1); err != nil {
		return err
	}
	if got := data.Local(p); got[0] != int64(prev*100000) || got[4095] != int64(prev*100000+4095) {
		return fmt.Errorf("put-signal data [%d..%d], want from PE %d", got[0], got[4095], prev)
	}
	return p.BarrierAll()
}

// leaks reports sockets or goroutines that outlive Finalize.
func leaks() error {
	// After a peer failed, protoactor's endpoint writer for it retries its
	// connection for ~10 s (5 tries, 2 s apart) before it ends; only what
	// outlives that is a leak.
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := sockets()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d sockets still open after Finalize", n)
		}
		time.Sleep(20 * time.Millisecond) // polling the fd table: nothing to wait on
	}
	// A dead letter at shutdown leaves protoactor's throttle timer
	// running for up to a second; anything that outlives the deadline is
	// a leak.
	for {
		err := goleak.Find()
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

func sockets() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
