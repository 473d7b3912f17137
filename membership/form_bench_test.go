package membership

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkForm16 forms a world of 16 processes on loopback per iteration
// (all started at once, the way shmemrun or a job scheduler starts them)
// and reports the mean and worst time until the last Form returned
// (form-ms, worst-ms; ns/op also counts closing the world). Run it with and
// without -race, and with the CPUs otherwise busy, to see how formation
// degrades under load; CI does not run it.
func BenchmarkForm16(b *testing.B) {
	log, _ := quietLogger()
	var total, worst time.Duration
	n := 0
	for b.Loop() {
		cfgs := job(b, 16, 16, log)
		start := time.Now()
		ws, es := formAll(cfgs)
		d := time.Since(start)
		total += d
		worst = max(worst, d)
		n++
		closeAll(b, ws)
		for i, err := range es {
			if err != nil {
				b.Fatalf("member %d: %v", i, err)
			}
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "form-ms")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}

// BenchmarkLeave forms a world of n processes per iteration and times the
// departures that a Finalize makes: one member's memberlist Leave alone
// (leave-ms, the cost before the Leaving mark), then another member's
// World.Leave, mark and departure (world-leave-ms). CHANGELOG's figures
// for the mark's cost come from it; CI does not run it.
func BenchmarkLeave(b *testing.B) {
	log, _ := quietLogger()
	for _, n := range []int{3, 8} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var plain, marked time.Duration
			runs := 0
			for b.Loop() {
				ws, es := formAll(job(b, n, n, log))
				for i, err := range es {
					if err != nil {
						b.Fatalf("member %d: %v", i, err)
					}
				}
				t0 := time.Now()
				if err := ws[n-1].ml.Leave(time.Second); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := ws[n-2].Leave(time.Second); err != nil {
					b.Fatal(err)
				}
				plain, marked = plain+t1.Sub(t0), marked+time.Since(t1)
				runs++
				closeAll(b, ws)
			}
			b.ReportMetric(float64(plain.Milliseconds())/float64(runs), "leave-ms")
			b.ReportMetric(float64(marked.Milliseconds())/float64(runs), "world-leave-ms")
		})
	}
}
