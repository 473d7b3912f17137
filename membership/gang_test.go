package membership

import (
	"testing"
	"time"
)

// TestGangWaitsForItsGoroutines: goroutines started, at any depth, by a
// function the gang ran are found by wait, and those of another gang are
// not; once they end, wait returns true.
func TestGangWaitsForItsGoroutines(t *testing.T) {
	n, other := fakeNode(t, "a", 1, 2), fakeNode(t, "b", 2, 2)
	release := make(chan struct{})
	ended := make(chan struct{})
	n.gang.run(func() {
		go func() { // as memberlist's loops are started by Create
			go func() {
				defer close(ended)
				<-release
			}()
		}()
	})
	if n.gang.wait(0) {
		t.Fatal("wait found none of the gang's goroutines running")
	}
	if !other.gang.wait(0) {
		t.Fatal("another gang's wait found this gang's goroutines")
	}
	close(release)
	<-ended
	if !n.gang.wait(time.Minute) {
		t.Fatal("the gang's goroutines ended, yet wait gave up")
	}
}
