package pathtest

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// testBell: every kind of remote write wakes a waiter parked on the
// target's bell. The waiter is armed and has found the word unchanged
// before the write is issued, and it waits with no timeout of its own, so
// only a ring (or a stale wake-up the bell may keep) can wake it: a
// provider that forgets one fails at the suite's guard.
//
// After an atomic or a signal, which providers write atomically, the
// waiter re-checks the word itself and must see the value. A put's bytes
// are plain stores that the waiter may not read while they land (the race
// detector would rightly object), so after a put's wake-up the test reads
// the word once the sender's Quiet has ordered it.
func testBell(t *testing.T, p Provider) {
	big := 2*p.largest() + 3
	wo := uint64(big+7) &^ 7 // the watched word; a large put ends with it
	w := p.world(t, 2, int(wo)+256)
	bell := w.Bell(1)
	if bell == nil {
		t.Skip("the provider rings no bell here; waits poll with Quiet")
	}
	h := w.Heap(1)
	path := w.Path(0, 1)
	eng := path.Engine()
	word := func(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }
	writes := []struct {
		name   string
		atomic bool // the provider writes the word with one atomic store
		write  func(v uint64) error
	}{
		{"8-byte Put", false, func(v uint64) error { return path.Put(wo, word(v)) }},
		{"unaligned Put", false, func(v uint64) error { return path.Put(wo, append(word(v), 9)) }},
		{"large Put", false, func(v uint64) error {
			return path.Put(wo+8-uint64(big), append(make([]byte, big-8), word(v)...))
		}},
		{"posted atomic", true, func(v uint64) error { return path.AtomicPost(transport.AtomicSet, 8, wo, v) }},
		{"fetching atomic", true, func(v uint64) error {
			_, err := path.Atomic(transport.AtomicSwap, 8, wo, v, 0)
			return err
		}},
		{"PutSignal", true, func(v uint64) error { return path.PutSignal(wo+64, []byte{1, 2, 3}, wo, v, transport.SignalSet) }},
	}
	for i, wr := range writes {
		v := uint64(i + 1)
		armed, woke, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(woke)
			a := bell.Arm()
			if load(h, wo, 8) == v { // before the write is issued: never
				bell.Disarm()
				return
			}
			close(armed)
			for {
				bell.Wait(a, time.Hour) // only a wake-up ends this wait
				bell.Disarm()
				select {
				case <-stop:
					return
				default:
				}
				if !wr.atomic {
					return
				}
				a = bell.Arm()
				if load(h, wo, 8) == v {
					bell.Disarm()
					return
				}
			}
		}()
		select {
		case <-armed:
		case <-woke:
			t.Fatalf("%s: the word held %d before the write", wr.name, v)
		}
		if err := wr.write(v); err != nil {
			t.Fatalf("%s: %v", wr.name, err)
		}
		select {
		case <-woke:
		case <-time.After(guard):
			close(stop)
			bell.Ring() // frees the waiter so that the test can end
			<-woke
			t.Fatalf("%s: the waiter was not woken within %v", wr.name, guard)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatal(err)
		}
		if got := load(h, wo, 8); got != v {
			t.Fatalf("%s: the word is %d after the wake-up and Quiet, want %d", wr.name, got, v)
		}
	}
}
