package udma

import (
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathtest"
)

// TestPathConformance runs the shared Path suite over both ways a udma
// path is built: between shared-memory segments with their futex bells
// (PEs on one host), and over private mappings with LocalBells, as the
// simulator's in-process world builds it (pe.NewLocalWorld).
func TestPathConformance(t *testing.T) {
	// Transport.Copy switches strategy at its piece size.
	thresholds := []int{copyPieceForTest, 2 * copyPieceForTest}
	t.Run("segment", func(t *testing.T) {
		pathtest.Run(t, pathtest.Provider{NewWorld: newSegmentWorld, Thresholds: thresholds, Bounds: pathtest.BoundsPanic})
	})
	t.Run("private", func(t *testing.T) {
		pathtest.Run(t, pathtest.Provider{NewWorld: newPrivateWorld, Thresholds: thresholds, Bounds: pathtest.BoundsPanic})
	})
}

// copyPieceForTest is transport.Copy's piece size (512 KiB).
const copyPieceForTest = 512 << 10

// mappedWorld is PEs whose heaps are all mapped into this process.
type mappedWorld struct {
	paths [][]transport.Path
	heaps [][]byte
	bells []transport.Bell
}

func (w *mappedWorld) Path(from, to int) transport.Path { return w.paths[from][to] }
func (w *mappedWorld) Heap(rank int) []byte             { return w.heaps[rank] }
func (w *mappedWorld) Bell(rank int) transport.Bell     { return w.bells[rank] }

// connect builds every PE's paths: views[from][to] is to's heap as from
// maps it.
func (w *mappedWorld) connect(views [][][]byte) {
	n := len(views)
	w.paths = make([][]transport.Path, n)
	for from := range n {
		fence := new(atomic.Uint64)
		w.paths[from] = make([]transport.Path, n)
		for to := range n {
			w.paths[from][to] = NewPath(views[from][to], w.bells[to], fence, true)
		}
	}
}

// newSegmentWorld gives each PE a segment and every PE its own mapping of
// every other's, as PEs of one host have.
func newSegmentWorld(t *testing.T, npes, heapSize int) pathtest.World {
	job := testJob(t)
	w := &mappedWorld{}
	views := make([][][]byte, npes)
	segs := make([]*Segment, npes)
	for r := range npes {
		segs[r] = mustCreate(t, job, r, heapSize)
		w.heaps = append(w.heaps, segs[r].Heap())
		w.bells = append(w.bells, segs[r].Bell())
	}
	for from := range npes {
		views[from] = make([][]byte, npes)
		for to := range npes {
			if to == from {
				views[from][to] = segs[to].Heap()
				continue
			}
			views[from][to] = mustOpen(t, job, to, heapSize).Heap()
		}
	}
	w.connect(views)
	return w
}

// newPrivateWorld maps each heap privately with a page of guard memory
// after it (the heap slice's spare capacity) and shares it in-process.
func newPrivateWorld(t *testing.T, npes, heapSize int) pathtest.World {
	w := &mappedWorld{}
	views := make([][][]byte, npes)
	for range npes {
		m, err := syscall.Mmap(-1, 0, heapSize+4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Munmap(m) })
		w.heaps = append(w.heaps, m[:heapSize])
		w.bells = append(w.bells, transport.NewLocalBell())
	}
	for from := range npes {
		views[from] = w.heaps
	}
	w.connect(views)
	return w
}
