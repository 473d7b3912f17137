package shmem_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// A failure scenario: what each PE does, and what each must get. The same
// table runs on the simulator here and on processes in world/ (the PE
// program there mirrors these bodies by name).
type scenario struct {
	name string
	npes int
	// body is PE p's part; its error is what the PE "got".
	body func(p *shmem.PE) error
	// want is the sentinel PE r's body must return (nil: success), and
	// fin the one its Finalize must return; frag must appear in errors.
	want func(r int) error
	fin  func(r int) error
	frag func(r int) []string
	// exit: the world ends by GlobalExit with this status (want and fin
	// are then checked with ExitStatus).
	exit int
	opts []sim.Option
}

func only(pe int, e error) func(int) error {
	return func(r int) error {
		if r == pe {
			return nil
		}
		return e
	}
}

func all(e error) func(int) error { return func(int) error { return e } }

// collectiveOf runs the collective named by kind on TeamWorld.
func collectiveOf(p *shmem.PE, kind string) error {
	switch kind {
	case "BarrierAll":
		return p.BarrierAll()
	case "SyncAll":
		return p.SyncAll()
	case "FCollect", "Reduce":
		src, err := shmem.Malloc[int64](p, 2)
		if err != nil {
			return err
		}
		dst, err := shmem.Malloc[int64](p, 2*p.NPEs())
		if err != nil {
			return err
		}
		if kind == "FCollect" {
			return shmem.FCollect(p.TeamWorld(), dst, src)
		}
		return shmem.Reduce(p.TeamWorld(), shmem.OpSum, dst.Slice(0, 2), src)
	case "Malloc":
		_, err := shmem.Malloc[int64](p, 8)
		return err
	case "Finalize":
		return nil // the harness's Finalize is this PE's call
	}
	return fmt.Errorf("no collective %q", kind)
}

// split makes PE odd call oddKind while the others call kind; the
// allocations of the data collectives come first, on every PE.
func split(odd int, oddKind, kind string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		src, err := shmem.Malloc[int64](p, 2)
		if err != nil {
			return err
		}
		dst, err := shmem.Malloc[int64](p, 2*p.NPEs())
		if err != nil {
			return err
		}
		k := kind
		if p.MyPE() == odd {
			k = oddKind
		}
		switch k {
		case "FCollect":
			return shmem.FCollect(p.TeamWorld(), dst, src)
		case "Reduce":
			return shmem.Reduce(p.TeamWorld(), shmem.OpSum, dst.Slice(0, 2), src)
		}
		return collectiveOf(p, k)
	}
}

func scenarios() []scenario {
	panicking := func(p *shmem.PE) error {
		if p.MyPE() == 2 {
			panic("expert table corrupt")
		}
		return p.BarrierAll()
	}
	return []scenario{
		{name: "finalize-vs-barrier", npes: 4, body: split(1, "Finalize", "BarrierAll"),
			want: only(1, shmem.ErrPEFailed), fin: all(nil),
			frag: func(r int) []string {
				if r == 1 {
					return nil
				}
				return []string{"PE 1 called Finalize while this PE waits in BarrierAll"}
			}},
		{name: "finalize-vs-fcollect", npes: 4, body: split(3, "Finalize", "FCollect"),
			want: only(3, shmem.ErrPEFailed), fin: all(nil)},
		{name: "finalize-vs-malloc", npes: 3, body: split(0, "Finalize", "Malloc"),
			want: only(0, shmem.ErrPEFailed), fin: all(nil)},
		{name: "fcollect-vs-reduce", npes: 4, body: split(0, "FCollect", "Reduce"),
			want: all(shmem.ErrInvalidArgument), fin: all(nil)},
		{name: "barrier-vs-reduce", npes: 4, body: split(0, "BarrierAll", "Reduce"),
			want: all(shmem.ErrInvalidArgument), fin: all(nil),
			frag: func(int) []string { return []string{"PE 0 called Barrier, PEs 1-3 Reduce"} }},
		{name: "malloc-vs-barrier", npes: 4, body: split(1, "Malloc", "BarrierAll"),
			want: all(shmem.ErrInvalidArgument), fin: all(nil)},
		{name: "panic", npes: 4, body: panicking, want: only(-1, shmem.ErrPEFailed), fin: only(2, shmem.ErrPEFailed),
			frag: func(r int) []string { return []string{"PE 2", "expert table corrupt"} }},
		{name: "lock-holder-leaves", npes: 3, body: func(p *shmem.PE) error {
			l, err := shmem.Calloc[int64](p, 1)
			if err != nil {
				return err
			}
			if p.MyPE() == 1 {
				return shmem.SetLock(p, l) // and leave holding it
			}
			if err := p.SyncAll(); err != nil {
				return err
			}
			return shmem.SetLock(p, l)
		}, want: only(1, shmem.ErrPEFailed), fin: all(nil),
			frag: func(r int) []string { return []string{"PE 1"} }},
		{name: "deadlock", npes: 3, body: func(p *shmem.PE) error {
			flag, err := shmem.Calloc[int64](p, 1)
			if err != nil {
				return err
			}
			return shmem.WaitUntil(p, flag, shmem.CmpEQ, 1) // nobody sets it
		}, want: all(shmem.ErrDeadlock), fin: all(nil),
			frag: func(int) []string { return []string{"PE 0 in WaitUntil", "PE 2 in WaitUntil", "heap offset"} }},
		{name: "op-timeout", npes: 1, opts: []sim.Option{sim.WithOpTimeout(30 * time.Millisecond)}, body: func(p *shmem.PE) error {
			sig, err := shmem.Calloc[uint64](p, 1)
			if err != nil {
				return err
			}
			_, err = shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1)
			return err
		}, want: all(shmem.ErrTimeout), fin: all(nil),
			frag: func(int) []string { return []string{"SignalWaitUntil", "operation timeout"} }},
		{name: "global-exit", npes: 4, exit: 5, body: func(p *shmem.PE) error {
			for i := 0; ; i++ {
				if p.MyPE() == 1 && i == 3 {
					p.GlobalExit(5)
				}
				if err := p.BarrierAll(); err != nil {
					return err
				}
			}
		}},
	}
}

// TestFailureMatrix runs every scenario on the simulator and checks what
// every PE got from its body and from its Finalize, and that the world
// ended (sim.Run returned).
func TestFailureMatrix(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			got := make([]error, sc.npes)
			fins := make([]error, sc.npes)
			var mu sync.Mutex
			runErr := sim.Run(sc.npes, func(p *shmem.PE) error {
				err := sc.body(p)
				fin := p.Finalize()
				mu.Lock()
				got[p.MyPE()], fins[p.MyPE()] = err, fin
				mu.Unlock()
				return nil
			}, sc.opts...)
			if sc.exit != 0 {
				if s, ok := shmem.ExitStatus(runErr); !ok || s != sc.exit {
					t.Fatalf("Run: %v, want exit status %d", runErr, sc.exit)
				}
				for r := range got {
					if r == 1 {
						continue // the caller: its calls after GlobalExit fail too, or it never got there
					}
					if s, ok := shmem.ExitStatus(got[r]); !ok || s != sc.exit {
						t.Errorf("PE %d got %v, want exit status %d", r, got[r], sc.exit)
					}
				}
				return
			}
			for r := 0; r < sc.npes; r++ {
				if sc.name == "panic" && r == 2 {
					continue // panicked: nothing recorded
				}
				if w := sc.want(r); !matches(got[r], w) {
					t.Errorf("PE %d got %v, want %v", r, got[r], w)
				}
				if w := sc.fin(r); !matches(fins[r], w) && !(sc.name == "panic" && errors.Is(fins[r], shmem.ErrPEFailed)) {
					t.Errorf("PE %d: Finalize returned %v, want %v", r, fins[r], w)
				}
				if sc.frag != nil && got[r] != nil {
					for _, f := range sc.frag(r) {
						if !strings.Contains(got[r].Error(), f) {
							t.Errorf("PE %d: %q does not say %q", r, got[r], f)
						}
					}
				}
			}
			if sc.name != "panic" && runErr != nil {
				t.Errorf("Run: %v", runErr)
			}
		})
	}
}

func matches(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

// TestSurvivorErrors: when a PE panics or returns an error, every other
// PE's error names it with one line of reason, never the panic's stack;
// the failed PE's own error keeps the stack.
func TestSurvivorErrors(t *testing.T) {
	for _, how := range []string{"panic", "error"} {
		t.Run(how, func(t *testing.T) {
			got := make([]error, 4)
			runErr := sim.Run(4, func(p *shmem.PE) error {
				if p.MyPE() == 3 {
					if how == "panic" {
						panic("routing table corrupt")
					}
					return errors.New("routing table corrupt\nsecond line")
				}
				err := p.BarrierAll()
				got[p.MyPE()] = err
				return errors.Join(err, p.Finalize())
			})
			if runErr == nil {
				t.Fatal("Run returned nil")
			}
			for r := 0; r < 3; r++ {
				err := got[r]
				if !errors.Is(err, shmem.ErrPEFailed) {
					t.Fatalf("PE %d got %v, want ErrPEFailed", r, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, "PE 3") || !strings.Contains(msg, "routing table corrupt") || !strings.Contains(msg, "BarrierAll") {
					t.Errorf("PE %d: %q does not name BarrierAll, PE 3 and the reason", r, msg)
				}
				if strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine") || len(msg) > 400 {
					t.Errorf("PE %d: survivor's error is not one line: %q", r, msg)
				}
			}
			if how == "panic" && !strings.Contains(runErr.Error(), "goroutine") {
				t.Errorf("the panicking PE's own error lost its stack: %v", runErr)
			}
		})
	}
}
