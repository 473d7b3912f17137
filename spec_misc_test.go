package shmem_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

func TestInitThread(t *testing.T) {
	if _, _, err := shmem.InitThread(context.Background(), shmem.ThreadMultiple+1); !isInvalid(err) {
		t.Fatalf("InitThread(level 4): %v", err)
	}
	p, got, err := shmem.InitThread(context.Background(), shmem.ThreadSingle, shmem.WithHeapSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Finalize()
	if got != shmem.ThreadMultiple || p.QueryThread() != shmem.ThreadMultiple {
		t.Fatalf("provided %d, QueryThread %d, want ThreadMultiple", got, p.QueryThread())
	}
}

// ThreadMultiple in practice: many goroutines of one PE, each with its
// own context, add to one word of every PE at once.
func TestThreadMultipleGoroutines(t *testing.T) {
	const goroutines, adds = 8, 100
	run(t, 3, func(p *shmem.PE) error {
		word, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		errc := make(chan error, goroutines)
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, err := p.CreateCtx(shmem.CtxPrivate)
				if err != nil {
					errc <- err
					return
				}
				for i := 0; i < adds; i++ {
					if err := shmem.AtomicAdd(ctx, word, 1, i%p.NPEs()); err != nil {
						errc <- err
						return
					}
				}
				errc <- ctx.Destroy()
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		// Each PE received adds/3 (rounded per i) from each goroutine of each PE.
		per := 0
		for i := 0; i < adds; i++ {
			if i%p.NPEs() == p.MyPE() {
				per++
			}
		}
		return want(p, "word", word.Local(p)[0], int64(per*goroutines*p.NPEs()))
	})
}

func TestAddrAccessibleAndHints(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		pad, err := shmem.Malloc[int8](p, 3)
		if err != nil {
			return err
		}
		s, err := shmem.MallocWithHints[uint64](p, 4, shmem.MallocAtomicsRemote|shmem.MallocSignalRemote)
		if err != nil {
			return err
		}
		if a := uintptr(unsafe.Pointer(&s.Local(p)[0])); a%64 != 0 {
			return fmt.Errorf("hinted object at %#x, not on a cache line", a)
		}
		if !shmem.AddrAccessible(p, s, 1-p.MyPE()) || shmem.AddrAccessible(p, s, 2) {
			return fmt.Errorf("AddrAccessible wrong for a live object")
		}
		if _, err := shmem.MallocWithHints[int32](p, 1, 8); !isInvalid(err) {
			return fmt.Errorf("unknown hint: %v", err)
		}
		plain, err := shmem.MallocWithHints[int32](p, 1, 0)
		if err != nil {
			return err
		}
		if err := shmem.AtomicAdd(p, s, 3, 0); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			if err := want(p, "hinted word", s.Local(p)[0], uint64(6)); err != nil {
				return err
			}
		}
		if err := shmem.Free(p, s); err != nil {
			return err
		}
		if shmem.AddrAccessible(p, s, 0) || shmem.AddrAccessible(p, shmem.Sym[int32]{}, 0) {
			return fmt.Errorf("AddrAccessible true for a freed or zero Sym")
		}
		return errorsJoin(shmem.Free(p, plain), shmem.Free(p, pad))
	})
}

func errorsJoin(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func TestPcontrolGatesTheLog(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	run(t, 1, func(p *shmem.PE) error {
		if p.PcontrolLevel() != 1 {
			return fmt.Errorf("initial level %d", p.PcontrolLevel())
		}
		p.Pcontrol(0)
		if p.PcontrolLevel() != 0 {
			return fmt.Errorf("level after Pcontrol(0): %d", p.PcontrolLevel())
		}
		// A context's destruction after a Quiet logs nothing either way;
		// what matters is that nothing below errors got through.
		mu.Lock()
		buf.Reset()
		mu.Unlock()
		if err := p.BarrierAll(); err != nil {
			return err
		}
		mu.Lock()
		out := buf.String()
		mu.Unlock()
		if strings.Contains(out, "level=INFO") || strings.Contains(out, "level=DEBUG") {
			return fmt.Errorf("log at level 0: %s", out)
		}
		p.Pcontrol(2)
		return want(p, "level", p.PcontrolLevel(), 2)
	}, sim.WithLogger(log))
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
