//go:build cgo && goshmem_fabric

package fabric

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(peerProcEnv) != "" {
		os.Exit(runPeerProc())
	}
	goleak.VerifyTestMain(m)
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testProvider is the provider the tests run on: GOSHMEM_FABRIC_PROVIDER,
// or tcp;ofi_rxm bound to loopback, the one Debian's libfabric offers
// everywhere.
func testProvider() (prov, node string) {
	if p := os.Getenv("GOSHMEM_FABRIC_PROVIDER"); p != "" {
		return p, os.Getenv("GOSHMEM_FABRIC_NODE")
	}
	return "tcp;ofi_rxm", "127.0.0.1"
}

// mmapHeap returns heap bytes outside the Go heap, as heap.Region would,
// with a page of guard memory as their spare capacity: no operation may
// write it (the conformance suite checks).
func mmapHeap(t testing.TB, n int) []byte {
	t.Helper()
	if n == 0 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, n+guardBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	return b[:n]
}

const guardBytes = 4096

type world struct {
	nodes []*Node
	heaps [][]byte
	bells []transport.Bell // set by newPathWorld; nil: no watcher rings one
}

// newWorld opens npes nodes in this process and connects all of them to
// all; it skips the test when libfabric has no usable provider here.
func newWorld(t testing.TB, npes, heap int, tweak func(*Config)) *world {
	t.Helper()
	prov, node := testProvider()
	w := &world{}
	addrs := make([][]byte, npes)
	for r := 0; r < npes; r++ {
		h := mmapHeap(t, heap)
		cfg := Config{Rank: r, NPEs: npes, Heap: h, Provider: prov, Node: node, Logger: quietLog()}
		if tweak != nil {
			tweak(&cfg)
		}
		n, err := Open(cfg)
		if err != nil {
			if r == 0 && errors.Is(err, errs.ErrBootstrap) {
				t.Skipf("libfabric provider %q unusable here: %v", prov, err)
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		w.nodes, w.heaps, w.bells = append(w.nodes, n), append(w.heaps, h), append(w.bells, nil)
		addrs[r] = n.Address()
	}
	for _, n := range w.nodes {
		if err := n.Connect(addrs); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) path(t testing.TB, from, to int) transport.Path {
	t.Helper()
	p, err := w.nodes[from].Path(to)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func isInvalid(err error) bool { return errors.Is(err, errs.ErrInvalidArgument) }
