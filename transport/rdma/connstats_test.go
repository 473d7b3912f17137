package rdma

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// TestConnStats: a lane whose first handshake fails dials again on the
// next operation, and the node counts one redial and one connection; a
// stream's engine counts none of its own, so a PE summing engines counts
// every lane once.
func TestConnStats(t *testing.T) {
	var refused atomic.Bool
	w := newWorld(t, 2, 64, func(c *Config) {
		c.Authenticate = func(conn net.Conn, server bool) error {
			if !server && refused.CompareAndSwap(false, true) {
				// A timeout: handshakeErr waits for no failure notice.
				return os.ErrDeadlineExceeded
			}
			return nil
		}
	})
	stats := func() transport.ConnStats { return w.nodes[0].Engine().(transport.ConnCounter).ConnStats() }
	p := w.path(0, 1)
	if err := p.Put(0, []byte{1}); !errors.Is(err, errs.ErrTLS) {
		t.Fatalf("first put: %v, want ErrTLS", err)
	}
	if got := stats(); got != (transport.ConnStats{}) {
		t.Fatalf("after the failed handshake: %+v, want none", got)
	}
	if err := p.Put(0, []byte{2}); err != nil {
		t.Fatalf("second put: %v", err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if w.heaps[1][0] != 2 {
		t.Fatalf("heap[0] = %d, want 2", w.heaps[1][0])
	}
	if got, want := stats(), (transport.ConnStats{Connects: 1, Redials: 1}); got != want {
		t.Fatalf("ConnStats = %+v, want %+v", got, want)
	}
}
