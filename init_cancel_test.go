package shmem_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
)

// onLog is a slog handler that calls parts[p] once, on the first record
// whose message contains p (any level).
type onLog struct {
	parts map[string]func()
	mu    *sync.Mutex
}

func (h onLog) Enabled(context.Context, slog.Level) bool { return true }
func (h onLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p, fn := range h.parts {
		if fn != nil && strings.Contains(r.Message, p) {
			fn()
			h.parts[p] = nil
		}
	}
	return nil
}

func (h onLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onLog) WithGroup(string) slog.Handler      { return h }

// gossipGoroutines returns the stacks of the goroutines running gossip
// code (memberlist's or goshmem's membership), taken at once: goleak
// waits for goroutines to end before it reports them, which hides one
// that outlives its Init only briefly.
func gossipGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "hashicorp/memberlist") || strings.Contains(g, "goshmem/shmem/membership.") {
			out = append(out, g)
		}
	}
	return out
}

// TestInitCancelledStopsEverything: a gossip Init is cancelled while its
// memberlist serves a stream that sends nothing (as a peer's join that
// stalls). Init returned with memberlist's goroutines still running: its
// loops for a moment, a probe in flight for up to ProbeInterval, and that
// stream's handler until memberlist's 5 s TCP timeout. Init now returns
// once they have ended, and nothing it started remains.
func TestInitCancelledStopsEverything(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var seeds []string
	for range 2 { // its own, and one where nobody answers
		port, err := bootstrap.FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, "127.0.0.1:"+strconv.Itoa(port))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listening := make(chan struct{})
	// Logged once gossip listens (Form tries the other seed), and when
	// memberlist takes the stream.
	log := slog.New(onLog{mu: new(sync.Mutex), parts: map[string]func(){
		"join failed":       func() { close(listening) },
		"Stream connection": cancel,
	}})
	type result struct {
		p   *shmem.PE
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := shmem.Init(ctx, shmem.WithSeeds(seeds, 2), shmem.WithGossipAddr(seeds[0]),
			shmem.WithJobSecret("a job secret of some length"), shmem.WithTimeout(5*time.Minute), shmem.WithLogger(log))
		done <- result{p, err}
	}()
	<-listening
	c, err := net.Dial("tcp", seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := <-done
	left := gossipGoroutines()
	if r.p != nil {
		r.p.Finalize()
		t.Fatal("Init of a world of 2 with 1 process succeeded")
	}
	if len(left) > 0 {
		t.Errorf("the cancelled Init returned with %d gossip goroutines running, the first:\n%s", len(left), left[0])
	}
	if !errors.Is(r.err, context.Canceled) || !errors.Is(r.err, shmem.ErrBootstrap) || !strings.Contains(r.err.Error(), "Init: in Form: ") {
		t.Errorf("Init: %v, want context.Canceled and ErrBootstrap, naming Init and its step", r.err)
	}
}
