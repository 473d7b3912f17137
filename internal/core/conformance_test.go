package core

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem/internal/simnet"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathtest"
)

// TestPathConformance runs the provider conformance suite over the paths
// of the in-process world the simulator runs on without its network
// (Eager delivery, no seed, model or faults: mapped memory).
func TestPathConformance(t *testing.T) {
	pathtest.Run(t, pathtest.Provider{NewWorld: newSimWorld, Thresholds: []int{512 << 10}, Bounds: pathtest.BoundsPanic})
}

// simWorld serves the suite the paths, heaps and bells of a LocalWorld.
type simWorld struct{ w *LocalWorld }

func newSimWorld(t *testing.T, npes, heapSize int) pathtest.World {
	// A PE reserves its team slots at the start of its heap: room for them
	// on top of what the suite asks for.
	w, err := NewLocalWorld(LocalConfig{NPEs: npes, HeapSize: heapSize + 1<<20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return simWorld{w}
}

func (s simWorld) Path(from, to int) transport.Path {
	p, err := s.w.PEs[from].Path("pathtest", to)
	if err != nil {
		panic(err) // the suite asks only for live PEs of the world
	}
	return p
}

func (s simWorld) Heap(rank int) []byte         { return s.w.PEs[rank].Local() }
func (s simWorld) Bell(rank int) transport.Bell { return s.w.PEs[rank].s.bell }

// TestPathConformanceSimNet runs the suite over the same world under the
// simulator's network (internal/simnet, Unscheduled so that the suite's
// goroutines may call it) in Lazy delivery, as sim.Run builds it: the
// paths PathTo makes, the bells Net wraps, the heaps the PEs map.
func TestPathConformanceSimNet(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("LazySeed%d", seed), func(t *testing.T) {
			newWorld := func(t *testing.T, npes, heapSize int) pathtest.World {
				net := simnet.New(simnet.Config{NPEs: npes, Mode: simnet.Lazy, Seed: seed, Unscheduled: true})
				w, err := NewLocalWorld(LocalConfig{NPEs: npes, HeapSize: heapSize + 1<<20, Net: net})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { w.Close() })
				return simWorld{w}
			}
			pathtest.Run(t, pathtest.Provider{NewWorld: newWorld, Thresholds: []int{512 << 10}, Bounds: pathtest.BoundsInvalid, ReadsMayMissWrites: true})
		})
	}
}
