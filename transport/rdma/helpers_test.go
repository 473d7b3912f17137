package rdma

import (
	"io"
	"log/slog"
	"testing"

	"github.com/goshmem/shmem/transport"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// guardBytes is the spare capacity of every test heap: memory past the
// heap's end that no frame may reach (the conformance suite checks it).
const guardBytes = 256

// world is npes nodes in one process, each with its own heap and bell.
type world struct {
	nodes []*Node
	heaps [][]byte
	bells []*transport.LocalBell
}

func newWorld(t testing.TB, npes, heap int, tweak func(*Config)) *world {
	t.Helper()
	w := &world{}
	for r := 0; r < npes; r++ {
		h := make([]byte, heap, heap+guardBytes)
		b := transport.NewLocalBell()
		cfg := Config{Rank: r, NPEs: npes, Heap: h, Bell: b, Logger: quietLog()}
		if tweak != nil {
			tweak(&cfg)
		}
		n, err := Listen(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		w.nodes, w.heaps, w.bells = append(w.nodes, n), append(w.heaps, h), append(w.bells, b)
	}
	return w
}

// path is rank from's direct path to rank to.
func (w *world) path(from, to int) transport.Path {
	return w.nodes[from].Path(to, w.nodes[to].Addr())
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}
