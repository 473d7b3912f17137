package world

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
)

// TestPostRacingClose sends failure notices to a peer's actor while the
// control plane closes, as a failure timer firing during Finalize does.
// Every post either goes before the remote layer starts to shut down or is
// dropped; none reaches it mid-shutdown, where it panics (CI saw
// "interface {} is nil, not *remote.endpoint").
func TestPostRacingClose(t *testing.T) {
	noLeaks(t)
	c, err := startControl("127.0.0.1", slog.New(slog.DiscardHandler), []byte("secret"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int64
	send := c.send
	c.send = func(pid *actor.PID, msg any) { sent.Add(1); send(pid, msg) }
	env, err := actors.Wrap(&actors.PEFailed{Rank: 1, Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	// No one listens there: each post starts an endpoint that fails to
	// connect, which close must end too.
	peer := actor.NewPID("127.0.0.1:1", "pe-1")
	var posted atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 200 {
				if c.post(peer, env) {
					posted.Add(1)
				}
			}
		}()
	}
	close(start)
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if c.post(peer, env) {
		t.Fatal("post after close reported sent")
	}
	if sent.Load() != posted.Load() {
		t.Fatalf("%d messages reached the remote layer, %d posts reported sent", sent.Load(), posted.Load())
	}
}
