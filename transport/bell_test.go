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

// TestLocalBellRingRange: a word waiter (ArmWord) is woken only by a
// range that covers its word; a waiter of Arm, and a word waiter beyond
// the slots, by any range; Ring wakes everyone.
func TestLocalBellRingRange(t *testing.T) {
	b := NewLocalBell()
	armed, slot := b.ArmWord(64)
	for _, r := range [][2]uint64{{0, 64}, {72, 80}, {1000, 1008}} {
		if b.RingRange(r[0], r[1]) {
			t.Errorf("RingRange(%d, %d) rang for a waiter of word 64", r[0], r[1])
		}
	}
	if b.Wait(armed, 0) {
		t.Fatal("a word waiter was woken by writes outside its word")
	}
	for _, r := range [][2]uint64{{64, 72}, {57, 65}, {71, 72}, {0, 4096}} {
		armed := b.seq.Load()
		if !b.RingRange(r[0], r[1]) || !b.Wait(armed, time.Hour) {
			t.Errorf("RingRange(%d, %d) did not wake the waiter of word 64", r[0], r[1])
		}
	}
	b.DisarmWord(slot)
	if b.RingRange(0, 1<<40) {
		t.Error("RingRange rang with nobody armed")
	}

	armed = b.Arm()
	if !b.RingRange(1<<20, 1<<20+1) || !b.Wait(armed, time.Hour) {
		t.Error("RingRange did not wake a waiter of Arm")
	}
	b.Disarm()

	var slots []int
	for i := 0; i <= wordSlots; i++ {
		_, s := b.ArmWord(uint64(8 * i))
		slots = append(slots, s)
	}
	if slots[wordSlots] != -1 {
		t.Fatalf("waiter %d got slot %d of %d", wordSlots, slots[wordSlots], wordSlots)
	}
	armed = b.seq.Load()
	if !b.RingRange(1<<20, 1<<20+8) || !b.Wait(armed, time.Hour) {
		t.Error("a word waiter beyond the slots was not woken by a write elsewhere")
	}
	for _, s := range slots {
		b.DisarmWord(s)
	}
	if b.waiters.Load() != 0 || b.any.Load() != 0 {
		t.Errorf("after every disarm: %d waiters, %d of any write", b.waiters.Load(), b.any.Load())
	}
	armed, slot = b.ArmWord(64)
	b.Ring()
	if !b.Wait(armed, time.Hour) {
		t.Error("Ring did not wake a word waiter")
	}
	b.DisarmWord(slot)
}
