package rdma

import (
	"testing"

	"github.com/goshmem/shmem/transport"
)

// rangeBell records the ranges the server rings for.
type rangeBell struct {
	*transport.LocalBell
	rings chan [2]uint64
}

func (b *rangeBell) RingRange(lo, hi uint64) bool {
	b.rings <- [2]uint64{lo, hi}
	return b.LocalBell.RingRange(lo, hi)
}

// TestServerRingsForTheRangeChanged: after each request that changes the
// target's memory the server rings once, for the wire offsets it changed
// (the data and the signal of a put-with-signal; statics in their own
// offsets), so a waiter on another word sleeps on (LocalBell.RingRange).
// Requests that change nothing (get, fetch) do not ring.
func TestServerRingsForTheRangeChanged(t *testing.T) {
	bell := &rangeBell{LocalBell: transport.NewLocalBell(), rings: make(chan [2]uint64, 16)}
	w := newWorld(t, 2, 4096, func(c *Config) {
		if c.Rank == 1 {
			c.Bell = bell
			c.Statics = make([]byte, 512)
		}
	})
	p, eng := w.path(0, 1), w.nodes[0].Engine()
	quiet := func() error { return eng.Quiet() }
	steps := []struct {
		name string
		do   func() error
		want [2]uint64
	}{
		{"fetch-add", func() error { _, err := p.Atomic(transport.AtomicFetchAdd, 8, 64, 1, 0); return err }, [2]uint64{64, 72}},
		{"posted 4-byte add", func() error {
			if err := p.AtomicPost(transport.AtomicFetchAdd, 4, 128, 1); err != nil {
				return err
			}
			return quiet()
		}, [2]uint64{128, 132}},
		{"put", func() error {
			if err := p.Put(256, make([]byte, 16)); err != nil {
				return err
			}
			return quiet()
		}, [2]uint64{256, 272}},
		{"put-with-signal", func() error {
			if err := p.PutSignal(512, make([]byte, 8), 1024, 1, transport.SignalSet); err != nil {
				return err
			}
			return quiet()
		}, [2]uint64{512, 1032}},
		{"get, fetch, then a swap", func() error {
			if err := p.Get(make([]byte, 8), 64); err != nil {
				return err
			}
			if _, err := p.Atomic(transport.AtomicFetch, 8, 64, 0, 0); err != nil {
				return err
			}
			_, err := p.Atomic(transport.AtomicSwap, 8, 2048, 5, 0)
			return err
		}, [2]uint64{2048, 2056}},
		{"statics put", func() error {
			if err := p.Put(transport.StaticsBase+8, make([]byte, 8)); err != nil {
				return err
			}
			return quiet()
		}, [2]uint64{transport.StaticsBase + 8, transport.StaticsBase + 16}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := <-bell.rings; got != s.want {
			t.Errorf("%s: rang for [%d, %d), want [%d, %d)", s.name, got[0], got[1], s.want[0], s.want[1])
		}
	}
	select {
	case got := <-bell.rings:
		t.Errorf("an extra ring for [%d, %d)", got[0], got[1])
	default:
	}
}
