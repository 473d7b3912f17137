package rdma

import (
	"testing"

	"github.com/goshmem/shmem/internal/secure"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathtest"
)

// TestPathConformance runs the shared Path suite over the TCP lanes,
// plain and under the job's TLS, with the default sizes and with small
// ones that make every route (small lane, bulk lane, chunks, the Get
// pipelining window) cheap to cross many times.
func TestPathConformance(t *testing.T) {
	srv, cli, err := secure.JobConfigs([]byte("a job secret long enough for the key"))
	if err != nil {
		t.Fatal(err)
	}
	tls := func(c *Config) { c.ServerTLS, c.ClientTLS = srv, cli }
	tiny := func(c *Config) { c.SmallMax, c.ChunkSize, c.MaxInflight = 512, 4096, 16384 }
	for _, v := range []struct {
		name  string
		tweak []func(*Config)
	}{
		{"tcp", nil},
		{"tcp-small-routes", []func(*Config){tiny}},
		{"tls", []func(*Config){tls}},
		{"tls-small-routes", []func(*Config){tls, tiny}},
	} {
		probe := Config{NPEs: 1}
		for _, f := range v.tweak {
			f(&probe)
		}
		cfg, err := probe.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(v.name, func(t *testing.T) {
			pathtest.Run(t, pathtest.Provider{
				NewWorld: func(t *testing.T, npes, heapSize int) pathtest.World {
					return newWorld(t, npes, heapSize, func(c *Config) {
						for _, f := range v.tweak {
							f(c)
						}
					})
				},
				Thresholds: []int{cfg.SmallMax, cfg.ChunkSize, cfg.MaxInflight},
				Bounds:     pathtest.BoundsPeerRefuses,
				Finalizes:  true,
			})
		})
	}
}

// Path, Heap, Bell and Fail make a world a pathtest.World.

func (w *world) Path(from, to int) transport.Path { return w.path(from, to) }
func (w *world) Heap(rank int) []byte             { return w.heaps[rank] }
func (w *world) Bell(rank int) transport.Bell     { return w.bells[rank] }

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
