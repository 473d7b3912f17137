package simnet_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem/internal/simnet"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathtest"
)

// TestPathConformance runs the provider conformance suite over the
// simulated network's paths in an Unscheduled network, in every delivery
// the simulator offers: Eager (applied when issued), Eager under a cost
// model (in flight until the modeled arrival), and Lazy with seeds that
// between them draw every mean delay (see Net.meanDelay), with and
// without a model and a lost link (relayed traffic).
func TestPathConformance(t *testing.T) {
	tcp := &simnet.Model{Name: "test", Intra: simnet.Params{Latency: 900, Overhead: 300, Gap: 100, PerByte: 0.1, Wake: 500}}
	tcp.Inter = tcp.Intra
	tcp.Inter.Latency = 5000
	cases := []struct {
		name string
		cfg  simnet.Config
	}{
		{"Eager", simnet.Config{Mode: simnet.Eager}},
		{"EagerModel", simnet.Config{Mode: simnet.Eager, Model: tcp}},
		{"EagerModelNodes", simnet.Config{Mode: simnet.Eager, Model: tcp, NodeOf: func(r int) int { return r }, Down: [][2]int{{0, 1}}}},
	}
	for seed := uint64(1); seed <= 6; seed++ {
		cases = append(cases, struct {
			name string
			cfg  simnet.Config
		}{fmt.Sprintf("LazySeed%d", seed), simnet.Config{Mode: simnet.Lazy, Seed: seed}})
	}
	cases = append(cases, struct {
		name string
		cfg  simnet.Config
	}{"LazyModelSeed1", simnet.Config{Mode: simnet.Lazy, Seed: 1, Model: tcp, Down: [][2]int{{0, 1}}}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inFlight := c.cfg.Mode == simnet.Lazy || c.cfg.Model != nil
			pathtest.Run(t, pathtest.Provider{
				NewWorld:           newNetWorld(c.cfg),
				Thresholds:         []int{4 << 10},
				Bounds:             pathtest.BoundsInvalid,
				ReadsMayMissWrites: inFlight,
			})
		})
	}
}

// netWorld is an Unscheduled simulated network over plain heaps; the
// capacity past each heap's end is guard memory.
type netWorld struct {
	n     *simnet.Net
	heaps [][]byte
	bells []transport.Bell
	node  func(int) int
}

const guardBytes = 256

func newNetWorld(cfg simnet.Config) func(t *testing.T, npes, heapSize int) pathtest.World {
	return func(t *testing.T, npes, heapSize int) pathtest.World {
		cfg := cfg
		cfg.NPEs = npes
		cfg.Unscheduled = true
		w := &netWorld{n: simnet.New(cfg), node: cfg.NodeOf}
		if w.node == nil {
			w.node = func(int) int { return 0 }
		}
		for r := range npes {
			h := make([]byte, heapSize, heapSize+guardBytes)
			w.heaps = append(w.heaps, h)
			w.bells = append(w.bells, w.n.Bell(r, transport.NewLocalBell(), h))
		}
		return w
	}
}

func (w *netWorld) Path(from, to int) transport.Path {
	return w.n.Path(from, to, w.node(from) == w.node(to))
}

func (w *netWorld) Heap(rank int) []byte         { return w.heaps[rank] }
func (w *netWorld) Bell(rank int) transport.Bell { return w.bells[rank] }
