//go:build cgo && goshmem_fabric

package fabric

import "testing"

// The Path contract (values at every size and route, atomics, signals,
// Fence, Quiet, bounds, failures) is checked by the shared suite: see
// pathtest_test.go. What stays here is particular to this provider.

// TestSelfAndThreeNodes: every node reaches every node, itself included,
// through one endpoint.
func TestSelfAndThreeNodes(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	for from := 0; from < 3; from++ {
		for to := 0; to < 3; to++ {
			p := w.path(t, from, to)
			if err := p.Put(uint64(8*from), []byte{byte(10*from + to)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.nodes[from].Engine().Quiet(); err != nil {
			t.Fatal(err)
		}
	}
	for to := 0; to < 3; to++ {
		for from := 0; from < 3; from++ {
			if got := w.heaps[to][8*from]; got != byte(10*from+to) {
				t.Fatalf("PE %d slot %d = %d", to, from, got)
			}
		}
	}
}
