//go:build cgo && goshmem_fabric

package fabric

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// Counter waits sleep in libfabric, and a wait on a counter that never
// reaches its threshold ends at OpTimeout with an error naming the
// operation and the peer. The sockets provider of libfabric 1.10 to 1.21
// (Debian 12 ships 1.17) returns from a timed fi_cntr_wait at once, so
// every wait of ours spun: C programs with many waits (capi's rma_all)
// crawled on a small host for minutes. Node.sleeps counts the sleeping
// waits, which a spinning provider makes by the thousand.

// waitProviders are the providers the wait tests run on.
var waitProviders = []string{"tcp;ofi_rxm", "sockets"}

// TestRemoteWatcherSleeps: an idle node's remote-write watcher (sockets:
// FI_RMA_EVENT) makes one wait per remoteWatchWait, not a spinning loop.
func TestRemoteWatcherSleeps(t *testing.T) {
	for _, prov := range waitProviders {
		t.Run(strings.ReplaceAll(prov, ";", "+"), func(t *testing.T) {
			n := newWorld(t, 1, 4096, func(c *Config) { c.Provider, c.Node = prov, "127.0.0.1" }).nodes[0]
			if !n.OnRemoteWrite(func() {}) {
				t.Skipf("provider %s counts no remote writes: no watcher", n.Provider())
			}
			const idle = 300 * time.Millisecond
			time.Sleep(20 * time.Millisecond) // the watcher's first wait, which may find out it must poll
			before := n.sleeps.Load()
			time.Sleep(idle)
			waits := n.sleeps.Load() - before
			if limit := uint64(2 * idle / (remoteWatchWait * time.Millisecond)); waits > limit {
				t.Fatalf("an idle watcher made %d counter waits in %v, want at most %d (one per %d ms): the provider's wait does not sleep (polling %v)",
					waits, idle, limit, remoteWatchWait, n.polling.Load())
			}
		})
	}
}

// TestQuietTimesOut: a Quiet whose put went to a stopped peer waits
// OpTimeout, sleeping in waits of at most 100 ms, then fails with
// errs.ErrTimeout naming Quiet, this PE and the peer.
func TestQuietTimesOut(t *testing.T) {
	for _, prov := range waitProviders {
		t.Run(strings.ReplaceAll(prov, ";", "+"), func(t *testing.T) {
			const bound = time.Second
			n := newWorld(t, 1, 4096, func(c *Config) {
				c.NPEs, c.Provider, c.Node, c.OpTimeout = 2, prov, "127.0.0.1", bound
			}).nodes[0]
			peer := startPeerProc(t, n)
			toPeer, _ := n.Path(1)
			if err := toPeer.Put(8, []byte{1}); err != nil { // connect while the peer runs
				t.Fatal(err)
			}
			if err := n.Engine().Quiet(); err != nil {
				t.Fatal(err)
			}
			peer.stop(t)
			if err := toPeer.Put(8, []byte{2}); err != nil {
				t.Fatal(err)
			}
			before, start := n.sleeps.Load(), time.Now()
			err := n.Engine().Quiet()
			took, waits := time.Since(start), n.sleeps.Load()-before
			var e *errs.Error
			if !errors.Is(err, errs.ErrTimeout) || !errors.As(err, &e) || e.Op != "Quiet" || e.PE != 0 || e.Target != 1 {
				t.Fatalf("Quiet with a put to a stopped peer = %v, want ErrTimeout from Quiet of PE 0 naming PE 1", err)
			}
			if took < bound || took > bound+5*time.Second {
				t.Fatalf("Quiet failed after %v, want OpTimeout (%v)", took, bound)
			}
			if limit := uint64(3 * bound / (100 * time.Millisecond)); waits > limit {
				t.Fatalf("Quiet made %d counter waits in %v, want at most %d (waits of 100 ms): the provider's wait does not sleep (polling %v)",
					waits, took, limit, n.polling.Load())
			}
			peer.resume(t)
		})
	}
}
