package world_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/transport/udma"
)

// The tests re-execute this binary as the PEs of a world: with
// GOSHMEM_TEST_ROLE set, TestMain runs that role instead of the tests.
func TestMain(m *testing.M) {
	if role := os.Getenv("GOSHMEM_TEST_ROLE"); role != "" {
		if err := runRole(role); err != nil {
			fmt.Fprintf(os.Stderr, "role %s: %v\n", role, err)
			if errors.Is(err, shmem.ErrPEFailed) {
				os.Exit(3)
			}
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runRole(role string) error {
	ctx := context.Background()
	var opts []shmem.Option
	if os.Getenv("TEST_NO_TLS") == "1" {
		opts = append(opts, shmem.WithoutTLS())
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

// world starts n PEs of role and returns their exit codes and output.
func world(t *testing.T, n int, role string, env ...string) ([]int, []string) {
	t.Helper()
	t.Setenv("SHMEM_UID_SESSION_ID", "127.0.0.1:0")
	var opts []shmem.Option
	for _, e := range env {
		if e == "TEST_NO_TLS=1" {
			opts = append(opts, shmem.WithoutTLS())
		}
	}
	uid, err := shmem.GetUniqueID(opts...)
	if err != nil {
		t.Fatal(err)
	}
	codes, outs := make([]int, n), make([]string, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "GOSHMEM_TEST_ROLE="+role, "SHMEM_RANK="+strconv.Itoa(r),
			"SHMEM_NPES="+strconv.Itoa(n), "SHMEM_UNIQUE_ID="+uid.String(), "SHMEM_SYMMETRIC_SIZE=8m")
		cmd.Env = append(cmd.Env, env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			timer := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
			defer timer.Stop()
			err := cmd.Wait()
			codes[r], outs[r] = cmd.ProcessState.ExitCode(), out.String()
			_ = err
		}()
	}
	wg.Wait()
	left, _ := udma.List(uid.JobName())
	if len(left) != 0 {
		t.Errorf("segments left in /dev/shm: %v", left)
	}
	return codes, outs
}

func expectAll(t *testing.T, codes []int, outs []string, want int) {
	t.Helper()
	for r, c := range codes {
		if c != want {
			t.Errorf("PE %d exited %d, want %d; output:\n%s", r, c, want, outs[r])
		}
	}
}

func TestProcessesSharedMemory(t *testing.T) {
	codes, outs := world(t, 3, "spmd")
	expectAll(t, codes, outs, 0)
}

func TestProcessesNetworkTLS(t *testing.T) {
	codes, outs := world(t, 3, "spmd", "SHMEM_TRANSPORT=tcp")
	expectAll(t, codes, outs, 0)
}

func TestProcessesNetworkWithoutTLS(t *testing.T) {
	codes, outs := world(t, 2, "spmd", "SHMEM_TRANSPORT=tcp", "TEST_NO_TLS=1")
	expectAll(t, codes, outs, 0)
}

func TestProcessFailureIsReported(t *testing.T) {
	codes, outs := world(t, 3, "die")
	if codes[2] != 7 {
		t.Errorf("the dying PE exited %d, want 7:\n%s", codes[2], outs[2])
	}
	// Every survivor fails with ErrPEFailed. The first to notice names
	// PE 2; a survivor may instead notice the other survivor leaving.
	named := false
	for r := 0; r < 2; r++ {
		if codes[r] != 3 {
			t.Errorf("survivor PE %d exited %d, want 3 (ErrPEFailed); output:\n%s", r, codes[r], outs[r])
		}
		named = named || strings.Contains(outs[r], "PE 2")
	}
	if !named {
		t.Errorf("no survivor named PE 2:\n%s\n%s", outs[0], outs[1])
	}
}

// TestProcessesRelayPolicy forbids the direct path between PEs 0 and 2
// (SHMEM_RELAY_VIA): their traffic goes through PE 1, over shared memory
// and over the network.
func TestProcessesRelayPolicy(t *testing.T) {
	t.Run("shm", func(t *testing.T) {
		codes, outs := world(t, 3, "spmd", "SHMEM_RELAY_VIA=0-2:1", "SHMEM_LOG_LEVEL=info")
		expectAll(t, codes, outs, 0)
		expectRelay(t, outs[0], 2, 1)
	})
	t.Run("tcp", func(t *testing.T) {
		codes, outs := world(t, 4, "spmd", "SHMEM_RELAY_VIA=0-2:1,1-3:2", "SHMEM_TRANSPORT=tcp", "SHMEM_LOG_LEVEL=info")
		expectAll(t, codes, outs, 0)
		expectRelay(t, outs[3], 1, 2)
	})
}

func expectRelay(t *testing.T, out string, peer, via int) {
	t.Helper()
	if !strings.Contains(out, fmt.Sprintf("peer=%d via=%d", peer, via)) {
		t.Errorf("no relay to PE %d via PE %d logged:\n%s", peer, via, out)
	}
}
