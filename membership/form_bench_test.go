package membership

import (
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
