package world_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/launch"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// The fault-injection suite: kill -9 of each rank in turn, at a random
// point during Init, during a loop of collective allocations and during a
// loop of barriers, over shared memory and TCP. Every survivor must end
// with ErrPEFailed naming the killed PE (never a healthy one, never an
// authentication failure or an agreement timeout), and the job must end
// before the launcher's timeout. The kill point is drawn from a seed that
// a failure prints; GOSHMEM_FAULT_SEED replays it, GOSHMEM_FAULT_RUNS sets
// the runs per case (default 10, 3 under -short). Each run logs how long
// the survivors took to report the failure (go test -v), which is where
// the README's failure table comes from.

const faultPEs = 3

// faultCase is one stimulus of the suite.
type faultCase struct {
	name      string
	loop      string        // RoleFault's loop
	atInit    bool          // kill during Init (from the start), else once all are READY
	maxDelay  time.Duration // the kill comes after a uniform draw in [0, maxDelay)
	transport string
}

func faultRuns(t *testing.T) int {
	if v := os.Getenv("GOSHMEM_FAULT_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("GOSHMEM_FAULT_RUNS=%q", v)
		}
		return n
	}
	if testing.Short() {
		return 3
	}
	return 10
}

func faultSeed(t *testing.T) uint64 {
	if v := os.Getenv("GOSHMEM_FAULT_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("GOSHMEM_FAULT_SEED=%q", v)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

func TestFaultInjection(t *testing.T) {
	var cases []faultCase
	for _, tr := range []string{"shm", "tcp"} {
		cases = append(cases,
			faultCase{"init-" + tr, lt.FaultBarrier, true, 400 * time.Millisecond, tr},
			faultCase{"alloc-" + tr, lt.FaultAlloc, false, 100 * time.Millisecond, tr},
			faultCase{"barrier-" + tr, lt.FaultBarrier, false, 100 * time.Millisecond, tr},
		)
	}
	runs, seed := faultRuns(t), faultSeed(t)
	t.Logf("seed %d (GOSHMEM_FAULT_SEED=%d replays it), %d runs per case", seed, seed, runs)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var detect, rank0 []time.Duration
			for i := range runs {
				victim := i % faultPEs
				delay := time.Duration(rng.Int64N(int64(c.maxDelay)))
				d := faultRun(t, c, victim, delay, seed)
				detect = append(detect, d...)
				if victim == 0 {
					rank0 = append(rank0, d...)
				}
			}
			logDetection(t, c.name, detect)
			logDetection(t, c.name+" (rank 0 killed)", rank0)
		})
	}
}

// faultRun runs one job of c, kills victim delay after the start (atInit)
// or after every PE printed READY, checks every survivor's end and
// returns how long after the kill each survivor reported the failure.
func faultRun(t *testing.T, c faultCase, victim int, delay time.Duration, seed uint64) []time.Duration {
	t.Helper()
	what := fmt.Sprintf("%s: kill -9 of PE %d %v after %s (seed %d)", c.name, victim, delay.Round(time.Millisecond),
		map[bool]string{true: "the start", false: "all were READY"}[c.atInit], seed)
	uid := lt.LoopbackUID(t, false)
	ready := make(chan int, faultPEs)
	env := []string{lt.EnvRole + "=" + lt.RoleFault, lt.EnvFaultLoop + "=" + c.loop, "SHMEM_SYMMETRIC_SIZE=8m"}
	if c.transport == "tcp" {
		env = append(env, "SHMEM_TRANSPORT=tcp")
	}
	if c.atInit {
		// A PE killed before it reached the rendezvous is waited for
		// until Init's bound: keep it short so the suite stays quick.
		env = append(env, lt.EnvInitTimeout+"=3s")
	}
	j, err := launch.Start(launch.Config{Program: peBinary, NPEs: faultPEs, UniqueID: uid.String(), Capture: true,
		Timeout: procTimeout, RankEnv: func(int) []string { return env },
		OnLine: func(rank int, line string) {
			if strings.HasPrefix(line, lt.Ready) {
				ready <- rank
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.atInit {
		for range faultPEs {
			select {
			case <-ready:
			case <-j.Done():
				// A PE ended before the world formed: the checks below say why.
			}
		}
	}
	time.Sleep(delay) // the kill point under test, not a synchronization
	killed := time.Now()
	if err := j.PE(victim).Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	res := j.Wait()
	if res.TimedOut {
		t.Errorf("%s: PEs still running after %v were killed", what, procTimeout)
	}
	var detect []time.Duration
	for r, e := range res.Ends {
		if r == victim {
			continue
		}
		out := j.PE(r).Output()
		d, ok := checkSurvivor(e.Code, out, victim, c.atInit)
		if !ok {
			t.Errorf("%s: survivor PE %d exited %d, want %d (ErrPEFailed) naming PE %d and nothing else; output:\n%s",
				what, r, e.Code, lt.ExitPEFailed, victim, out)
			continue
		}
		if d > 0 {
			detect = append(detect, time.Unix(0, d).Sub(killed))
		}
	}
	return detect
}

// checkSurvivor reports whether a survivor ended as it must after
// victim's kill -9: ErrPEFailed whose message names PE victim and is
// neither an authentication failure nor an agreement timeout. A kill
// during Init may instead make Init fail (ExitInitFailed) naming the
// victim as "PE v" or "rank v": a PE that died before or during the
// rendezvous is reported by the rendezvous, with ErrBootstrap, at Init's
// bound (see README). It returns the time, in Unix ns, of the FAILED
// line, 0 without one.
func checkSurvivor(code int, out string, victim int, atInit bool) (int64, bool) {
	var line string
	var at int64
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "FAILED "); ok {
			ns, msg, _ := strings.Cut(rest, ": ")
			at, _ = strconv.ParseInt(ns, 10, 64)
			line = msg
		}
		if rest, ok := strings.CutPrefix(l, "INIT FAILED: "); ok {
			line = rest
		}
	}
	switch {
	case code == lt.ExitPEFailed:
	case atInit && code == lt.ExitInitFailed:
	default:
		return 0, false
	}
	name := fmt.Sprintf("PE %d", victim)
	named := strings.Contains(line, name) || code == lt.ExitInitFailed && strings.Contains(line, fmt.Sprintf("rank %d ", victim))
	if !named || strings.Contains(line, "no agreement within") {
		return 0, false
	}
	// A PE that died is not an authentication failure. (The rendezvous,
	// which Init runs before any lane, still reports rank 0's death in
	// its handshake as one: a known gap, README's failure section.)
	if code == lt.ExitPEFailed && (strings.Contains(line, "secret") || strings.Contains(line, "TLS failure")) {
		return 0, false
	}
	// No other PE may be named as the one that failed.
	for r := range faultPEs {
		if r != victim && strings.Contains(line, fmt.Sprintf("PE %d failed", r)) {
			return 0, false
		}
	}
	return at, true
}

// logDetection logs the spread of the detection times of one case.
func logDetection(t *testing.T, name string, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	ms := func(x time.Duration) string { return x.Round(time.Millisecond).String() }
	t.Logf("DETECTION %s: %d survivors, min %s, median %s, max %s", name, len(d), ms(d[0]), ms(d[len(d)/2]), ms(d[len(d)-1]))
}
