package core

import (
	"encoding/binary"
	"sync"
	"testing"
)

// TestLargeWorldMakesPathsOnUse: a LocalWorld above tablePathsMax makes a
// PE's path to a peer when the PE first reaches it. In a world of n PEs
// where PE 0 puts to PE 1 only, n+1 paths exist (each PE's path to itself,
// which gives it its engine, and PE 0's to PE 1), not n²; the put lands.
// A small world keeps its table of n² paths.
func TestLargeWorldMakesPathsOnUse(t *testing.T) {
	const n = tablePathsMax + 44
	w, err := NewLocalWorld(LocalConfig{NPEs: n, HeapSize: int(MinHeapSize(n)) + 1<<16})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.PathsMade(); got != n {
		t.Fatalf("%d paths after start, want %d (one a PE, to itself)", got, n)
	}
	off := w.PEs[1].Heap().Size() - 8 // past the team pool, which comes first
	var wg sync.WaitGroup
	for range 4 { // goroutines of PE 0 racing to make the same path keep one
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, err := w.PEs[0].Path("Put", 1)
			if err != nil {
				t.Error(err)
				return
			}
			if err := path.Put(uint64(off), binary.LittleEndian.AppendUint64(nil, 42)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := binary.LittleEndian.Uint64(w.PEs[1].Local()[off:]); got != 42 {
		t.Errorf("PE 1 reads %d, want 42", got)
	}
	if got := w.PathsMade(); got != n+1 {
		t.Errorf("%d paths after PE 0 reached PE 1, want %d", got, n+1)
	}

	small := localWorld(t, 3)
	if got := small.PathsMade(); got != 9 {
		t.Errorf("a world of 3 PEs holds %d paths, want its table of 9", got)
	}
}
