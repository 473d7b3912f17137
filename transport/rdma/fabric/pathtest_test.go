//go:build cgo && goshmem_fabric

package fabric

import (
	"testing"

	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathtest"
)

// TestPathConformance runs the shared Path suite over the test provider,
// at the default bounce buffer and at a small one that makes the pinned
// direct route cheap to cross.
func TestPathConformance(t *testing.T) {
	for _, v := range []struct {
		name   string
		tweak  func(*Config)
		bounce int
	}{
		{"default", nil, 16 << 10}, // Config.BounceSize's default
		{"small-bounce", func(c *Config) { c.BounceSize = 4096 }, 4096},
		// sockets offers remote-write events here: the bells ring.
		{"sockets", func(c *Config) { c.Provider, c.Node = "sockets", "127.0.0.1" }, 16 << 10},
	} {
		t.Run(v.name, func(t *testing.T) {
			pathtest.Run(t, pathtest.Provider{
				NewWorld: func(t *testing.T, npes, heapSize int) pathtest.World {
					return newPathWorld(t, npes, heapSize, v.tweak)
				},
				// 64 is above the inject size that matters here; the
				// bounce buffer divides bounce from direct transfers.
				Thresholds: []int{64, v.bounce},
				Bounds:     pathtest.BoundsInvalid,
				Finalizes:  true,
				// Completion counters are per node (see failedOutstanding).
				FailureSticks: true,
			})
		})
	}
}

// newPathWorld is newWorld whose nodes ring a bell after remote writes,
// where the provider offers remote-write events.
func newPathWorld(t *testing.T, npes, heapSize int, tweak func(*Config)) *world {
	w := newWorld(t, npes, heapSize, tweak)
	for r, n := range w.nodes {
		if n.RemoteWriteEvents() {
			b := transport.NewLocalBell()
			if !n.OnRemoteWrite(b.Ring) {
				t.Fatalf("node %d: OnRemoteWrite refused", r)
			}
			w.bells[r] = b
		}
	}
	return w
}

// Path, Heap, Bell and Fail make a world a pathtest.World.

func (w *world) Path(from, to int) transport.Path {
	p, err := w.nodes[from].Path(to)
	if err != nil {
		panic(err) // ranks come from the suite, which stays inside the world
	}
	return p
}

func (w *world) Heap(rank int) []byte { return w.heaps[rank] }

// Bell returns the bell remote writes ring, nil on a provider without
// remote-write events (tcp;ofi_rxm): its waits poll.
func (w *world) Bell(rank int) transport.Bell { return w.bells[rank] }

// Fail closes rank's node and tells every other node, as the world's
// failure detector does.
func (w *world) Fail(rank int) {
	w.nodes[rank].Close()
	for r, n := range w.nodes {
		if r != rank {
			n.PeerFailed(rank)
		}
	}
}
