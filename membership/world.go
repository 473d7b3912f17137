package membership

import (
	"sync"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/goshmem/shmem/internal/errs"
)

// Member is one process of a formed world.
type Member struct {
	Rank int
	Name string // memberlist node name, unique per incarnation
	Addr string // gossip address host:port
	Meta []byte // the application record from that process's Config.Meta
}

// World is a formed, sealed world. Its table never changes; failures are
// reported on Failures.
type World struct {
	n       *node
	ml      *memberlist.Memberlist
	members []Member
	self    int

	mu       sync.Mutex
	shutdown bool
}

func newWorld(n *node, ml *memberlist.Memberlist) *World {
	w := &World{n: n, ml: ml}
	n.mu.Lock()
	defer n.mu.Unlock()
	w.members = make([]Member, len(n.table))
	for r, c := range n.table {
		w.members[r] = Member{Rank: r, Name: c.Name, Addr: c.Addr, Meta: c.Hdr.Meta}
		if c.Name == n.self.Name {
			w.self = r
		}
	}
	return w
}

// Members returns the table in rank order. The slice is a copy; the Meta
// slices are shared and must not be modified.
func (w *World) Members() []Member { return append([]Member(nil), w.members...) }

// Self returns this process's entry.
func (w *World) Self() Member { return w.members[w.self] }

// Failures delivers the rank of each member that dies (detected by
// probing) or leaves without World.Leave, once per rank, including members
// already gone when this process sealed. A rank reported here stays failed
// even if the process is seen again. The channel has room for every rank,
// so it never blocks gossip, and is closed by Close.
func (w *World) Failures() <-chan int { return w.n.failures }

// Leave announces this process's departure and waits up to timeout for the
// announcement: sent to every member directly (one TCP stream each, at
// once) and gossiped in this process's header, within half of timeout,
// then the departure itself. The others do not report a member that left
// so as failed, unless they missed both (then they report it, as they
// would a crash). Close must still be called.
func (w *World) Leave(timeout time.Duration) error { return w.leave("Leave", true, timeout) }

// Abandon announces this process's departure as a failure, for a process
// that gives up: the others report it at once instead of after probing it.
// It waits up to timeout for the announcement to be gossiped. Close must
// still be called.
func (w *World) Abandon(timeout time.Duration) error { return w.leave("Abandon", false, timeout) }

func (w *World) leave(op string, graceful bool, timeout time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shutdown {
		return errs.New(op, w.self, errs.NoPE, errs.ErrFinalized, "world already closed")
	}
	deadline := time.Now().Add(timeout)
	var marked error
	if graceful {
		// The announcement first, direct and gossiped, before the
		// departure: a member takes the departure for graceful only if it
		// holds either then, and memberlist drops a queued update once a
		// newer message about the same member is queued.
		w.n.mu.Lock()
		w.n.self.Hdr.Leaving = true
		told := w.n.tellLeavingLocked()
		w.n.mu.Unlock()
		half := time.Now().Add(timeout / 2) // the rest is the departure's
		marked = w.ml.UpdateNode(timeout / 2)
		t := time.NewTimer(max(time.Until(half), 0))
		select {
		case <-told:
		case <-t.C: // a member slow to accept: the gossiped mark remains
		}
		t.Stop()
	}
	// Leave even unmarked: the others then learn of the departure at
	// once, as a failure, instead of by probing.
	if err := w.ml.Leave(max(time.Until(deadline), 0)); err != nil {
		return errs.New(op, w.self, errs.NoPE, errs.ErrTimeout, "%v", err)
	}
	if marked != nil {
		return errs.New(op, w.self, errs.NoPE, errs.ErrTimeout, "marking the departure graceful: %v", marked)
	}
	return nil
}

// Close stops gossip and releases its sockets and goroutines, returning
// once memberlist's have ended (a probe in flight: up to ProbeInterval),
// without announcing a departure (call Leave first for that). The others then see
// this process fail. Close closes the Failures channel; calling it again
// does nothing.
func (w *World) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shutdown {
		return nil
	}
	w.shutdown = true
	w.n.mu.Lock()
	w.n.closed = true // no more failure reports or seal answers
	close(w.n.failures)
	w.n.mu.Unlock()
	w.n.closing.Store(true)
	err := w.ml.Shutdown()
	w.n.replies.Wait()
	w.n.awaitGang()
	if err != nil {
		return errs.New("Close", w.self, errs.NoPE, errs.ErrFinalized, "stopping gossip: %v", err)
	}
	return nil
}
