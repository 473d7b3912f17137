package core

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/udma"
)

// hangGuard bounds the waits of these tests; reaching it fails them.
const hangGuard = 30 * time.Second

// droppedPath is a network path whose peer's connection dropped: every
// operation fails with ErrPEFailed, once release is closed.
type droppedPath struct {
	transport.Path
	release chan struct{}
}

func (p droppedPath) Put(uint64, []byte) error {
	<-p.release
	return errs.New("Put", 0, 1, errs.ErrPEFailed, "connection lost")
}

// TestExitWinsOverDroppedConnection: an operation whose peer's connection
// dropped because the world is ending by GlobalExit reports the exit, not
// a failure; without an exit it reports the failure.
func TestExitWinsOverDroppedConnection(t *testing.T) {
	for _, exit := range []bool{true, false} {
		t.Run(map[bool]string{true: "exit", false: "failure"}[exit], func(t *testing.T) {
			sys := actorsys.NewSystem(nil)
			defer sys.Shutdown()
			reg, err := heap.NewRegion(1 << 20)
			if err != nil {
				t.Fatal(err)
			}
			defer reg.Close()
			h := heap.New(reg.Bytes())
			bell := transport.NewLocalBell()
			dropped := droppedPath{Path: udma.NewPath(reg.Bytes(), bell, new(atomic.Uint64), true), release: make(chan struct{})}
			p, err := Start(Config{Rank: 0, NPEs: 2, WorldID: 3, Heap: h, Bell: bell,
				Paths:  []transport.Path{udma.NewPath(reg.Bytes(), bell, new(atomic.Uint64), true), dropped},
				Shared: []int{0}, System: sys, Send: func(int, any) bool { return true },
				Timeout: hangGuard, OnFailure: nil})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = sys.Root.StopFuture(p.s.pePID).Wait()
			}()
			res := make(chan error, 1)
			path, err := p.Path("Put", 1)
			if err != nil {
				t.Fatal(err)
			}
			go func() { res <- path.Put(0, []byte{1}) }()
			if exit {
				// The notice is recorded while the operation is under way.
				sys.Root.Send(p.s.pePID, &actors.GlobalExit{Rank: 1, Status: 42})
				select {
				case <-p.s.exitKnown:
				case <-time.After(hangGuard):
					t.Fatal("the PE actor did not record the exit")
				}
			}
			close(dropped.release)
			err = <-res
			if status, ok := ExitStatus(err); exit && (!ok || status != 42) {
				t.Fatalf("Put returned %v, want the exit with status 42", err)
			}
			if !exit && !errors.Is(err, errs.ErrPEFailed) {
				t.Fatalf("Put returned %v, want ErrPEFailed", err)
			}
		})
	}
}
