//go:build cgo && goshmem_fabric

package fabric

import (
	"testing"

	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathbench"
)

// The benchmarks are the shared suite (package pathbench): two nodes of
// one process, here over the test provider (tcp;ofi_rxm on loopback unless
// GOSHMEM_FABRIC_PROVIDER says otherwise).

func benchPath(b *testing.B, heap int) (transport.Path, transport.Engine) {
	w := newWorld(b, 2, heap, nil)
	return w.path(b, 0, 1), w.nodes[0].Engine()
}

// BenchmarkPath runs the suite every provider shares (pathbench).
func BenchmarkPath(b *testing.B) { pathbench.Run(b, benchPath) }
