package membership

import (
	"testing"
	"time"
)

// BenchmarkForm16 forms a world of 16 processes on loopback per iteration
// (all started at once, the way shmemrun or a job scheduler starts them)
// and reports the mean and worst time until the last Form returned. Run it
// with and without -race, and with the CPUs otherwise busy, to see how
// formation degrades under load; it is not run by CI.
func BenchmarkForm16(b *testing.B) {
	log, _ := quietLogger()
	var worst time.Duration
	for b.Loop() {
		cfgs := job(b, 16, 16, log)
		start := time.Now()
		ws, es := formAll(cfgs)
		d := time.Since(start)
		worst = max(worst, d)
		closeAll(b, ws)
		for i, err := range es {
			if err != nil {
				b.Fatalf("member %d: %v", i, err)
			}
		}
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
