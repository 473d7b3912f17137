package rdma

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// A pipelined Get issuing its next chunk behind a large Put on the same
// lane: the Put's write waits for the peer to read, the peer waits to write
// the Get's earlier answers, and the Get's caller, queued for the lane,
// cannot read them. The lane's reader goroutine must read them meanwhile;
// without it both ends stalled until the write deadline (OpTimeout, short
// here so that a regression fails fast instead of hanging).
func TestPipelinedGetBesideLargePut(t *testing.T) {
	const size = 16 << 20
	w := newWorld(t, 2, 2*size, func(c *Config) { c.OpTimeout = 5 * time.Second })
	p := w.path(0, 1)
	copy(w.heaps[1][size:], pattern(size, 3))
	src := pattern(size, 9)
	for round := range 4 {
		var wg sync.WaitGroup
		errc := make(chan error, 2)
		got := make([]byte, size)
		wg.Add(2)
		go func() { defer wg.Done(); errc <- p.Get(got, size) }()
		go func() { defer wg.Done(); errc <- p.Put(0, src) }()
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if !bytes.Equal(got, w.heaps[1][size:]) {
			t.Fatalf("round %d: Get read wrong bytes", round)
		}
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.heaps[1][:size], src) {
		t.Fatal("Put's bytes did not land")
	}
}
