package transport

import (
	"testing"
	"time"
)

// TestLocalBellWaitReportsTheRing: Wait says whether a ring or its timeout
// ended it, which decides whether the waiter polls next.
func TestLocalBellWaitReportsTheRing(t *testing.T) {
	b := NewLocalBell()
	armed := b.Arm()
	if b.Wait(armed, time.Millisecond) {
		t.Error("Wait without a ring reported one")
	}
	b.Disarm()
	armed = b.Arm()
	b.Ring()
	if !b.Wait(armed, time.Hour) {
		t.Error("Wait after a ring reported a timeout")
	}
	b.Disarm()
}
