package simnet

import (
	"math"
	"testing"
)

// FuzzDecodeModel: a model file is bytes from outside (sim.LoadModel); any
// of them decodes to a model whose every cost is finite and not negative,
// or to an error, and never panics.
func FuzzDecodeModel(f *testing.F) {
	f.Add([]byte(`{"name":"x","intra":{"latency_ns":300,"overhead_ns":40,"gap_ns":50,"per_byte_ns":0.1,"wake_ns":200},"inter":{"latency_ns":9000},"cores_per_node":2}`))
	f.Add([]byte(`{"intra":{"latency_ns":-1}}`))
	f.Add([]byte(`{"intra":{"latency_ns":1e308},"inter":{"gap_ns":1e400}}`))
	f.Add([]byte(`{"unknown":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeModel(b, "fuzz.json")
		if err != nil {
			return
		}
		if m.Cores < 0 || m.Name == "" {
			t.Fatalf("accepted %+v", m)
		}
		for _, p := range []Params{m.Intra, m.Inter} {
			for _, v := range []float64{p.Latency, p.Overhead, p.Gap, p.PerByte, p.Wake, p.Slice} {
				if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v >= maxCost {
					t.Fatalf("accepted a cost of %v in %+v", v, m)
				}
			}
		}
	})
}
