package fabric

import (
	"sync"
	"testing"
)

// TestWakeBroadcast: one broadcast wakes every waiter that took its channel
// before it (several Quiets waiting for GetNBIs at once), and a waiter that
// takes the channel after it waits for the next one.
func TestWakeBroadcast(t *testing.T) {
	var w wake
	const waiters = 4
	var taken, woken sync.WaitGroup
	taken.Add(waiters)
	woken.Add(waiters)
	for range waiters {
		go func() {
			c := w.wait()
			taken.Done()
			<-c
			woken.Done()
		}()
	}
	taken.Wait()
	w.broadcast()
	woken.Wait()

	late := w.wait()
	select {
	case <-late:
		t.Fatal("a channel taken after the broadcast is already closed")
	default:
	}
	w.broadcast()
	<-late
	w.broadcast() // with no waiter: nothing to close
}
