package membership

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"time"
)

// gangLabel is the profiler label key that marks the goroutines memberlist
// starts for one node.
const gangLabel = "goshmem.membership"

// gang is the goroutines memberlist starts for one node. memberlist's
// Shutdown returns before they end (its loops see the closed channel a
// moment later, and a probe in flight waits out its ProbeInterval, more
// while memberlist thinks the host loaded), so Form, cancelled, returned
// with them still running. Goroutines inherit their creator's profiler
// labels, so memberlist, created on a goroutine carrying a label that is
// this node's alone, starts only goroutines that carry it: wait finds
// them in the goroutine profile.
type gang struct {
	ctx    context.Context // carries the label
	needle []byte          // how the goroutine profile prints it
}

func newGang(n *node) gang {
	id := fmt.Sprintf("%p", n) // unique among the nodes alive
	return gang{
		ctx:    pprof.WithLabels(context.Background(), pprof.Labels(gangLabel, id)),
		needle: fmt.Appendf(nil, "%q:%q", gangLabel, id),
	}
}

// run calls f on a goroutine carrying the gang's label, and returns once
// f has: every goroutine f starts, and their own, carry the label.
func (g gang) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		pprof.SetGoroutineLabels(g.ctx)
		f()
	}()
	<-done
}

// wait returns true once no goroutine carries the gang's label, or false
// after limit. It polls the goroutine profile, which stops the world for
// a moment, so it is for shutdown only.
func (g gang) wait(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	pause := 100 * time.Microsecond
	var b bytes.Buffer
	for {
		b.Reset()
		if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil || !bytes.Contains(b.Bytes(), g.needle) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}
