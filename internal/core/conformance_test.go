package core

import (
	"testing"

	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathtest"
)

// TestPathConformance runs the provider conformance suite over the paths
// of the in-process world the simulator runs on.
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
