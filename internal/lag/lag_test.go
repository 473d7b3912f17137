package lag

import (
	"runtime/metrics"
	"testing"
	"time"
)

// TestLagBehind: the deadlock detector's grace starts again when a
// goroutine waited to run longer than the bound since the last look, or
// when the look itself came late; the first look only takes stock, and
// waits below the bound do not count.
func TestLagBehind(t *testing.T) {
	h := &metrics.Float64Histogram{Buckets: []float64{0, 0.001, 0.01, 0.1, 1}, Counts: []uint64{0, 0, 0, 0}}
	l := NewFrom(100*time.Millisecond, func() *metrics.Float64Histogram { return h }) // bound 25 ms
	t0 := time.Unix(1000, 0)
	step := func(i int, at time.Duration, counts [4]uint64, want bool) {
		t.Helper()
		copy(h.Counts, counts[:])
		if got := l.Behind(t0.Add(at)); got != want {
			t.Errorf("look %d: behind %v, want %v", i, got, want)
		}
	}
	step(1, 0, [4]uint64{5, 0, 0, 7}, false)                       // first look: stock taken, not behind
	step(2, 100*time.Millisecond, [4]uint64{900, 40, 0, 7}, false) // only waits under 10 ms
	step(3, 200*time.Millisecond, [4]uint64{900, 40, 0, 8}, true)  // one wait of 100 ms-1 s
	step(4, 300*time.Millisecond, [4]uint64{990, 40, 0, 8}, false)
	step(5, 600*time.Millisecond, [4]uint64{990, 40, 0, 8}, true) // came 300 ms after the last
	step(6, 700*time.Millisecond, [4]uint64{990, 40, 0, 8}, false)
}

// TestLagReadsRuntime: the detector's own lag reads the runtime's
// scheduling latencies (a histogram on this Go) without allocating after
// its first look.
func TestLagReadsRuntime(t *testing.T) {
	l := New(100 * time.Millisecond)
	if l.read() == nil {
		t.Fatalf("%s is not a histogram on this Go", schedLatencies)
	}
	now := time.Now()
	l.Behind(now)
	if n := testing.AllocsPerRun(10, func() { now = now.Add(time.Millisecond); l.Behind(now) }); n != 0 {
		t.Errorf("a look allocates %v times", n)
	}
}
