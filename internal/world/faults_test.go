package world_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/launch"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/transport/udma"
)

// The fault-injection suite: kill -9 of each rank in turn, at a random
// point during Init, during a loop of collective allocations and during a
// loop of barriers, over shared memory and TCP. Every survivor must end
// with ErrPEFailed naming the killed PE (never a healthy one, never an
// authentication failure or an agreement timeout), also from Init, and
// the job must end before the launcher's timeout. The one exception is a
// death no PE can know of: a PE killed before it reached rank 0's
// rendezvous (rank 0 logs each arrival, which the suite reads) is a rank
// that never arrived, reported at Init's timeout. The kill point is drawn from a seed that
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
		// Init takes 40-60 ms here (more with -race): kills within 150 ms
		// of the start land in each of its stages, and just after it.
		cases = append(cases,
			faultCase{"init-" + tr, lt.FaultBarrier, true, 150 * time.Millisecond, tr},
			faultCase{"alloc-" + tr, lt.FaultAlloc, false, 100 * time.Millisecond, tr},
			faultCase{"barrier-" + tr, lt.FaultBarrier, false, 100 * time.Millisecond, tr},
		)
	}
	runs, seed := faultRuns(t), faultSeed(t)
	t.Logf("seed %d (GOSHMEM_FAULT_SEED=%d replays it), %d runs per case", seed, seed, runs)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var detect, rank0, inInit []time.Duration
			for i := range runs {
				victim := i % faultPEs
				delay := time.Duration(rng.Int64N(int64(c.maxDelay)))
				d, di := faultRun(t, c, victim, delay, seed)
				detect = append(append(detect, d...), di...)
				inInit = append(inInit, di...)
				if victim == 0 {
					rank0 = append(append(rank0, d...), di...)
				}
			}
			logDetection(t, c.name, detect)
			logDetection(t, c.name+" (rank 0 killed)", rank0)
			logDetection(t, c.name+" (Init's ErrPEFailed)", inInit)
		})
	}
}

// faultRun runs one job of c, kills victim delay after the start (atInit)
// or after every PE printed READY, checks every survivor's end and
// returns how long after the kill each survivor reported the failure: from
// an operation, and from Init.
func faultRun(t *testing.T, c faultCase, victim int, delay time.Duration, seed uint64) (detect, inInit []time.Duration) {
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
	var arrived rendezvousLog
	j, err := launch.Start(launch.Config{Program: peBinary, NPEs: faultPEs, UniqueID: uid.String(), Capture: true,
		Timeout: procTimeout, RankEnv: func(rank int) []string {
			if c.atInit && rank == 0 {
				// Rank 0 logs each rank's arrival at the rendezvous:
				// what the checks below expect depends on it.
				return append(slices.Clip(env), "SHMEM_LOG_LEVEL=debug")
			}
			return env
		},
		OnLine: func(rank int, line string) {
			if strings.HasPrefix(line, lt.Ready) {
				ready <- rank
			}
			if rank == 0 {
				arrived.note(line)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	// A killed PE cannot unlink its segment: the launcher reaps the job's
	// (as shmemrun does), or the suite would leave one in /dev/shm a run.
	t.Cleanup(func() { _, _ = udma.Reap(uid.JobName()) })
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
	// What rank 0 had seen of the rendezvous when the kill was sent (a
	// rank may have arrived whose line was not read yet: the checks allow
	// for that, never the other way).
	seen := arrived.snapshot()
	res := j.Wait()
	if res.TimedOut {
		t.Errorf("%s: PEs still running after %v were killed", what, procTimeout)
	}
	for r, e := range res.Ends {
		if r == victim {
			continue
		}
		out := j.PE(r).Output()
		end := survivorEnd{code: e.Code, out: out, victim: victim, atInit: c.atInit,
			victimArrived: seen[victim], survivorArrived: seen[r]}
		d, initErr, ok := end.check()
		if !ok {
			t.Errorf("%s: survivor PE %d exited %d, want %s; rank 0 had logged the arrival of ranks %v; output:\n%s",
				what, r, e.Code, end.want(), seen, out)
			continue
		}
		switch {
		case d > 0 && initErr:
			inInit = append(inInit, time.Unix(0, d).Sub(killed))
		case d > 0:
			detect = append(detect, time.Unix(0, d).Sub(killed))
		}
	}
	// Survivors leave no name of the job in /dev/shm, the victim's
	// included: after Init every PE unlinks every name it mapped, and a
	// failed Init reaps the job's (the cleanup above is for failures).
	if left, err := udma.List(uid.JobName()); err != nil || len(left) > 0 {
		names := make([]string, len(left))
		for i, s := range left {
			names[i] = s.Name
		}
		t.Errorf("%s: left in /dev/shm after every PE ended: %v (%v)", what, names, err)
	}
	return detect, inInit
}

// rendezvousLog collects, from rank 0's debug log, the ranks that had
// arrived at its rendezvous (rank 0 itself from the start).
type rendezvousLog struct {
	mu      sync.Mutex
	arrived map[int]bool
}

func (l *rendezvousLog) note(line string) {
	_, rest, ok := strings.Cut(line, "rendezvous: rank arrived")
	if !ok {
		return
	}
	_, rank, ok := strings.Cut(rest, " rank=")
	if !ok {
		return
	}
	rank, _, _ = strings.Cut(rank, " ")
	r, err := strconv.Atoi(rank)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.arrived == nil {
		l.arrived = map[int]bool{}
	}
	l.arrived[r] = true
}

// snapshot returns which ranks had arrived, rank 0 included.
func (l *rendezvousLog) snapshot() map[int]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[int]bool{0: true}
	for r := range l.arrived {
		m[r] = true
	}
	return m
}

// survivorEnd is how one survivor ended, and what was known of the
// rendezvous when its peer was killed.
type survivorEnd struct {
	code   int
	out    string
	victim int
	atInit bool
	// victimArrived, survivorArrived: rank 0 had logged the victim's,
	// this survivor's, arrival at the rendezvous before the kill.
	victimArrived, survivorArrived bool
}

// want says what check accepts, for the failure message.
func (e survivorEnd) want() string {
	s := fmt.Sprintf("%d (ErrPEFailed) or, in Init, %d with ErrPEFailed (%q), naming PE %d and nothing else",
		lt.ExitPEFailed, lt.ExitInitFailed, lt.InitPEFailed, e.victim)
	switch {
	case !e.atInit:
		return fmt.Sprintf("%d (ErrPEFailed) naming PE %d and nothing else", lt.ExitPEFailed, e.victim)
	case e.victim != 0 && !e.victimArrived:
		s += fmt.Sprintf(", or (PE %d had not reached the rendezvous) Init's timeout naming it as never arrived", e.victim)
	case e.victim == 0 && !e.survivorArrived:
		s += ", or (this PE had not reached the rendezvous) Init's timeout saying rank 0 did not answer"
	}
	return s
}

// check reports whether the survivor ended as it must after the victim's
// kill -9: ErrPEFailed naming the victim and no other PE, from Init or
// from the loop, never an authentication failure or an agreement
// timeout. Init's timeout is accepted only where no PE can know of the
// death: a victim killed before it reached rank 0's rendezvous is a rank
// that never arrived (as a rank not started yet is), and a survivor that
// had not reached it when rank 0 died finds nobody listening (as before
// rank 0 starts). It returns the time, in Unix ns, of the FAILED line (or
// of Init's ErrPEFailed: initErr), 0 without one.
func (e survivorEnd) check() (at int64, initErr, ok bool) {
	var line string
	initPEFailed := false
	for _, l := range strings.Split(e.out, "\n") {
		if rest, ok := strings.CutPrefix(l, "FAILED "); ok {
			ns, msg, _ := strings.Cut(rest, ": ")
			at, _ = strconv.ParseInt(ns, 10, 64)
			line = msg
		}
		if rest, ok := strings.CutPrefix(l, "INIT FAILED: "); ok {
			line = rest
		}
		if rest, ok := strings.CutPrefix(l, lt.InitPEFailed+" "); ok {
			initPEFailed = true
			at, _ = strconv.ParseInt(rest, 10, 64)
		}
	}
	switch {
	case e.code == lt.ExitPEFailed:
	case e.atInit && e.code == lt.ExitInitFailed && initPEFailed:
	case e.atInit && e.code == lt.ExitInitFailed:
		return 0, true, e.unknowable(line)
	default:
		return 0, false, false
	}
	if !strings.Contains(line, fmt.Sprintf("PE %d", e.victim)) || strings.Contains(line, "no agreement within") {
		return 0, false, false
	}
	// A PE that died is not an authentication failure: the error's
	// sentinel, last in its message, is ErrPEFailed (the exit code says
	// errors.Is; this says it is not also ErrTLS). The handshake error a
	// dead peer's cut caused may be quoted in the detail.
	if strings.HasSuffix(line, ": "+errs.ErrTLS.Error()) || strings.Contains(line, ": "+errs.ErrTLS.Error()+": "+errs.ErrPEFailed.Error()) {
		return 0, false, false
	}
	// No other PE may be named as the one that failed.
	for r := range faultPEs {
		if r != e.victim && strings.Contains(line, fmt.Sprintf("PE %d failed", r)) {
			return 0, false, false
		}
	}
	return at, initPEFailed, true
}

// neverArrived matches the rendezvous' verdict on missing ranks.
var neverArrived = regexp.MustCompile(`ranks? ([0-9,]+) never arrived`)

// unknowable reports whether an Init error that is not ErrPEFailed is one
// of the timeouts check accepts, in the case that allows it.
func (e survivorEnd) unknowable(line string) bool {
	if !strings.Contains(line, "timed out") {
		return false
	}
	if e.victim != 0 && !e.victimArrived {
		m := neverArrived.FindStringSubmatch(line)
		return m != nil && slices.Contains(strings.Split(m[1], ","), strconv.Itoa(e.victim))
	}
	if e.victim == 0 && !e.survivorArrived {
		return strings.Contains(line, "rank 0 at") && strings.Contains(line, "did not answer")
	}
	return false
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
