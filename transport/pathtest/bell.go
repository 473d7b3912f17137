package pathtest

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/goshmem/shmem/transport"
)

// testBell: every kind of remote write wakes a waiter parked on the
// target's bell, and the waiter then sees the value. The waiter is armed
// and has found the word unchanged before the write is issued, and it
// waits with no timeout of its own, so only a ring can wake it: a
// provider that forgets one fails at the suite's guard.
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
	word := func(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }
	writes := []struct {
		name  string
		write func(v uint64) error
	}{
		{"8-byte Put", func(v uint64) error { return path.Put(wo, word(v)) }},
		{"unaligned Put", func(v uint64) error { return path.Put(wo, append(word(v), 9)) }},
		{"large Put", func(v uint64) error {
			b := append(make([]byte, big-8), word(v)...)
			return path.Put(wo+8-uint64(big), b)
		}},
		{"posted atomic", func(v uint64) error { return path.AtomicPost(transport.AtomicSet, 8, wo, v) }},
		{"fetching atomic", func(v uint64) error {
			_, err := path.Atomic(transport.AtomicSwap, 8, wo, v, 0)
			return err
		}},
		{"PutSignal", func(v uint64) error { return path.PutSignal(wo+64, []byte{1, 2, 3}, wo, v, transport.SignalSet) }},
	}
	for i, wr := range writes {
		v := uint64(i + 1)
		armed, woke := make(chan struct{}), make(chan struct{})
		stop := make(chan struct{})
		go func() {
			defer close(woke)
			for first := true; ; first = false {
				a := bell.Arm()
				if load(h, wo, 8) == v {
					bell.Disarm()
					return
				}
				if first {
					close(armed)
				}
				bell.Wait(a, time.Hour) // only a ring ends this wait
				bell.Disarm()
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
		<-armed
		if err := wr.write(v); err != nil {
			t.Fatalf("%s: %v", wr.name, err)
		}
		select {
		case <-woke:
		case <-time.After(guard):
			close(stop)
			bell.Ring() // frees the waiter so that the test can end
			<-woke
			t.Fatalf("%s: the waiter was not woken within %v (word %d, want %d)", wr.name, guard, load(h, wo, 8), v)
		}
	}
	if err := path.Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
}
