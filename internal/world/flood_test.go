package world

import (
	"cmp"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// links builds a reach matrix of n PEs from symmetric links.
func links(n int, pairs ...[2]int) [][]bool {
	r := make([][]bool, n)
	for a := range r {
		r[a] = make([]bool, n)
		r[a][a] = true
	}
	for _, p := range pairs {
		r[p[0]][p[1]], r[p[1]][p[0]] = true, true
	}
	return r
}

func none(int) bool { return false }

func TestFloodTargets(t *testing.T) {
	// A line 0-1-2-3: PE 3 failed, PE 2 detected it.
	line := links(4, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3})
	for _, c := range []struct {
		name               string
		me, origin, failed int
		skip               func(int) bool
		want               []int
	}{
		{"the detector tells its neighbours", 2, 2, 3, none, []int{1}},
		{"a hearer forwards beyond the detector's reach", 1, 2, 3, none, []int{0}},
		{"nothing beyond reach is left", 0, 2, 3, none, nil},
		{"gone peers are skipped", 1, 2, 3, func(q int) bool { return q == 0 }, nil},
		{"an unknown origin reaches nobody", 1, 99, 3, none, []int{0, 2}},
	} {
		if got := floodTargets(line, c.me, c.origin, c.failed, c.skip); !slices.Equal(got, c.want) {
			t.Errorf("%s: floodTargets(me %d, origin %d, failed %d) = %v, want %v", c.name, c.me, c.origin, c.failed, got, c.want)
		}
	}
	// Where the detector reaches everyone, nobody forwards.
	full := allReach(5)
	if got := floodTargets(full, 0, 0, 4, none); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("detector on a flat network tells %v, want [1 2 3]", got)
	}
	for me := 1; me < 4; me++ {
		if got := floodTargets(full, me, 0, 4, none); len(got) != 0 {
			t.Errorf("PE %d forwards %v on a flat network", me, got)
		}
	}
}

// TestFloodReachesEverySurvivor simulates the flood on random directed
// reach graphs, with several detectors and notices delivered in random
// order, and checks that exactly the PEs reachable from a detector hear,
// each forwarding at most once.
func TestFloodReachesEverySurvivor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 3000; trial++ {
		n := 2 + rng.IntN(7)
		reach := make([][]bool, n)
		for a := range reach {
			reach[a] = make([]bool, n)
			for b := range reach[a] {
				reach[a][b] = a == b || rng.IntN(3) == 0
			}
		}
		failed := rng.IntN(n)
		var detectors []int
		for r := 0; r < n; r++ {
			if r != failed && rng.IntN(3) == 0 {
				detectors = append(detectors, r)
			}
		}
		if len(detectors) == 0 {
			continue
		}
		type notice struct{ to, origin int }
		heard := make([]bool, n)
		sends := make([]int, n)
		var queue []notice
		record := func(me, origin int) {
			if heard[me] {
				return
			}
			heard[me] = true
			for _, q := range floodTargets(reach, me, origin, failed, none) {
				if !reach[me][q] {
					t.Fatalf("PE %d told PE %d, which it cannot connect to", me, q)
				}
				sends[me]++
				queue = append(queue, notice{q, origin})
			}
		}
		// Detections and deliveries interleave at random.
		pending := slices.Clone(detectors)
		for len(pending) > 0 || len(queue) > 0 {
			if len(pending) > 0 && (len(queue) == 0 || rng.IntN(2) == 0) {
				d := pending[0]
				pending = pending[1:]
				record(d, d)
				continue
			}
			i := rng.IntN(len(queue))
			m := queue[i]
			queue = slices.Delete(queue, i, i+1)
			record(m.to, m.origin)
		}
		// Who should hear: everyone reachable from a detector, avoiding
		// the failed PE.
		want := make([]bool, n)
		stack := slices.Clone(detectors)
		for len(stack) > 0 {
			a := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if want[a] {
				continue
			}
			want[a] = true
			for b, ok := range reach[a] {
				if ok && b != failed && !want[b] {
					stack = append(stack, b)
				}
			}
		}
		for r := range want {
			if heard[r] != want[r] {
				t.Fatalf("trial %d: reach %v, failed %d, detectors %v: PE %d heard %v, want %v", trial, reach, failed, detectors, r, heard[r], want[r])
			}
			if sends[r] > n-1 {
				t.Fatalf("trial %d: PE %d sent %d notices in a world of %d", trial, r, sends[r], n)
			}
		}
	}
}

// TestFailureNoticeCrossesARelay runs the real failure path in one
// process: four PEs on a line 0-1-2-3 (no other PE can connect to another),
// each with the control plane's OnFailure hook, whose sends go only along
// the line. PE 2 detects that PE 3 failed; PEs 0 and 1, blocked in a
// barrier PE 3 never joins, must end with ErrPEFailed naming PE 3 although
// neither can connect to PE 3 nor PE 0 to PE 2.
func TestFailureNoticeCrossesARelay(t *testing.T) {
	const n, failed, detector = 4, 3, 2
	reach := links(n, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3})
	log := slog.New(slog.DiscardHandler)
	ctls := make([]*control, n)
	var mu sync.Mutex
	var sent [][2]int // from, to
	for r := range ctls {
		ctls[r] = &control{log: log, rank: r, started: true, flood: newFloodState(reach, r)}
	}
	w, err := core.NewLocalWorld(core.LocalConfig{NPEs: n, HeapSize: 1 << 20, Logger: log,
		OnFailure: func(r int) func(int, string, int, bool) { return ctls[r].onFailure }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	root := w.PEs[0].ActorRoot()
	for r, c := range ctls {
		c.post = func(to int, m *actors.PEFailed) {
			mu.Lock()
			sent = append(sent, [2]int{r, to})
			mu.Unlock()
			if to == coordinatorTarget {
				return // this world's coordinator is not named; no agreement runs here
			}
			if !reach[r][to] {
				t.Errorf("PE %d sent to PE %d, which it cannot connect to", r, to)
				return
			}
			root.Send(root.ActorSystem().NewLocalPID(core.PEActor(to)), m)
		}
	}
	errsOf := make([]error, n)
	var wg sync.WaitGroup
	for _, r := range []int{0, 1, 2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errsOf[r] = w.PEs[r].BarrierAll()
		}()
	}
	w.PEs[detector].NotifyFailed(failed, "test: lost the connection to PE 3")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang guard, not a timing: the notice takes microseconds
		t.Fatal("a survivor's barrier did not end after the failure notice")
	}
	for _, r := range []int{0, 1, 2} {
		var e *errs.Error
		if !errors.Is(errsOf[r], errs.ErrPEFailed) || !errors.As(errsOf[r], &e) || e.Target != failed {
			t.Errorf("PE %d's barrier returned %v, want ErrPEFailed naming PE %d", r, errsOf[r], failed)
		}
	}
	// PE 2 told PE 1 and the coordinator; PE 1 forwarded to PE 0; PE 0,
	// whose only neighbour the detector told, sent nothing.
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(sent, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	if want := [][2]int{{1, 0}, {2, -1}, {2, 1}}; !slices.Equal(sent, want) {
		t.Errorf("notices sent (from, to; -1 the coordinator) = %v, want %v", sent, want)
	}
}
