package pathtest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// testFailure: operations in flight towards a PE that fails, and every
// later one, end with errs.ErrPEFailed naming it rather than hanging; the
// other peers' paths keep working.
func testFailure(t *testing.T, p Provider) {
	big := p.largest() + 1
	w := p.world(t, 3, 2*big)
	f, ok := w.(Failer)
	if !ok {
		t.Skip("the provider's peers cannot fail (mapped memory outlives its PE)")
	}
	p1, p2 := w.Path(0, 1), w.Path(0, 2)
	eng := p1.Engine()
	if err := p1.Put(0, []byte{1}); err != nil { // connected while alive
		t.Fatal(err)
	}
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
	const goroutines = 4
	var wg sync.WaitGroup
	started := make(chan struct{}, goroutines)
	errc := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- untilError(p1, big, started)
		}()
	}
	for range goroutines {
		<-started
	}
	f.Fail(1)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatalf("operations towards the failed PE still running after %v", guard)
	}
	close(errc)
	for err := range errc {
		wantErr(t, err, errs.ErrPEFailed, 1, "an operation in flight at the failure")
	}
	for name, op := range everyOp(big) {
		err := op(p1)
		if err == nil {
			err = eng.Quiet()
		}
		wantErr(t, err, errs.ErrPEFailed, 1, name+" after the failure")
	}
	// Quiet may keep reporting PE 1, but never blames the live peer.
	blamesFailed := func(err error) bool {
		var e *errs.Error
		return errors.Is(err, errs.ErrPEFailed) && errors.As(err, &e) && e.Target == 1
	}
	if err := p2.Put(8, []byte{7, 7}); err != nil && !(p.FailureSticks && blamesFailed(err)) {
		t.Fatalf("Put to the live peer: %v", err)
	}
	got := make([]byte, 2)
	err := p2.Get(got, 8)
	switch {
	case err == nil && (got[0] != 7 || got[1] != 7):
		t.Fatalf("Get from the live peer after the failure read %v, want [7 7]", got)
	case err != nil && !(p.FailureSticks && blamesFailed(err)):
		t.Fatalf("Get from the live peer after the failure: %v", err)
	}
	if err := eng.Quiet(); err != nil && !blamesFailed(err) {
		t.Fatalf("Quiet after the failure: %v", err)
	}
}

// untilError issues operations of every kind on p until one fails and
// returns that error; it reports on started after its first round.
func untilError(p transport.Path, big int, started chan<- struct{}) error {
	ops := everyOp(big)
	for round := 0; ; round++ {
		for _, op := range ops {
			if err := op(p); err != nil {
				if round == 0 {
					started <- struct{}{}
				}
				return err
			}
		}
		if round == 0 {
			started <- struct{}{}
		}
		if err := p.Engine().Quiet(); err != nil {
			return err
		}
	}
}

// everyOp is one operation of each kind, small and large, within a heap of
// 2*big bytes.
func everyOp(big int) map[string]func(transport.Path) error {
	buf := make([]byte, big)
	return map[string]func(transport.Path) error{
		"Put":       func(p transport.Path) error { return p.Put(16, []byte{1, 2, 3}) },
		"large Put": func(p transport.Path) error { return p.Put(uint64(big), make([]byte, big)) },
		"Get":       func(p transport.Path) error { return p.Get(make([]byte, 8), 0) },
		"large Get": func(p transport.Path) error { return p.Get(make([]byte, big), uint64(big)) },
		"GetNBI":    func(p transport.Path) error { return p.GetNBI(make([]byte, 8), 0) },
		"Atomic": func(p transport.Path) error {
			_, err := p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0)
			return err
		},
		"AtomicPost": func(p transport.Path) error { return p.AtomicPost(transport.AtomicFetchAdd, 8, 0, 1) },
		"PutSignal":  func(p transport.Path) error { return p.PutSignal(16, buf[:3], 8, 1, transport.SignalAdd) },
	}
}

// testFinalized: once its engine is closed, a provider that says it
// finalizes fails every operation with errs.ErrFinalized.
func testFinalized(t *testing.T, p Provider) {
	if !p.Finalizes {
		t.Skip("the provider's Close leaves its paths usable (mapped memory)")
	}
	w := p.world(t, 2, 4096)
	path := w.Path(0, 1)
	if err := path.Put(0, []byte{1}); err != nil {
		t.Fatal(err)
	}
	eng := path.Engine()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	for name, op := range everyOp(1024) {
		wantErr(t, op(path), errs.ErrFinalized, 1, name+" after Close")
	}
	if err := eng.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
