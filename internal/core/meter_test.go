package core

import (
	"testing"
	"time"
)

// TestBucket: each latency lands in the first bucket whose bound is not
// below it, past the last bound in the overflow bucket.
func TestBucket(t *testing.T) {
	for _, c := range []struct {
		d    int64
		want int
	}{{0, 0}, {1, 0}, {32, 0}, {33, 1}, {128, 1}, {129, 2}, {512, 2}, {513, 3},
		{int64(LatencyBound(NumBuckets - 1)), NumBuckets - 1}, {int64(LatencyBound(NumBuckets-1)) + 1, NumBuckets}, {int64(time.Hour), NumBuckets}} {
		if got := bucket(c.d); got != c.want {
			t.Errorf("bucket(%d) = %d, want %d", c.d, got, c.want)
		}
	}
}

// TestCountSamples: at level 1 the 1st and the (SampleEvery+1)th of a
// cell's operations are timed, at level 2 every one, at 0 none is
// counted.
func TestCountSamples(t *testing.T) {
	m := newMeter(1)
	c := m.newCounts(m.own, 1, func(int) PathKind { return PathShm })
	timed := 0
	for i := 0; i < 2*SampleEvery; i++ {
		if c.Count(OpPut, 0, 8) != nil {
			timed++
		}
	}
	cell := &m.own.cells[PathShm][OpPut]
	if timed != 2 || cell.ops != 2*SampleEvery || cell.bytes != 16*SampleEvery {
		t.Errorf("level 1: %d timed, %d ops, %d bytes; want 2, %d, %d", timed, cell.ops, cell.bytes, 2*SampleEvery, 16*SampleEvery)
	}
	m.setLevel(2)
	if c.Count(OpPut, 0, 8) == nil {
		t.Error("level 2: an operation not timed")
	}
	m.setLevel(0)
	if c.Count(OpPut, 0, 8) != nil || cell.ops != 2*SampleEvery+1 {
		t.Errorf("level 0: counted (%d ops)", cell.ops)
	}
	var none *Counts
	if none.Count(OpPut, 0, 8) != nil {
		t.Error("nil Counts timed an operation")
	}
}
