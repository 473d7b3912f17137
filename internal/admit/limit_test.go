package admit

import (
	"testing"
	"time"
)

// TestLimiter: one event passes per Every; the next one that passes says
// how many were held back in between.
func TestLimiter(t *testing.T) {
	l := Limiter{Every: time.Second}
	t0 := time.Unix(1000, 0)
	if held, ok := l.Allow(t0); !ok || held != 0 {
		t.Fatalf("first event: held %d, passed %v; want 0, true", held, ok)
	}
	for i := range 5 {
		if _, ok := l.Allow(t0.Add(time.Duration(i) * 100 * time.Millisecond)); ok {
			t.Fatalf("event %d within Every passed", i)
		}
	}
	if held, ok := l.Allow(t0.Add(time.Second)); !ok || held != 5 {
		t.Fatalf("event after Every: held %d, passed %v; want 5, true", held, ok)
	}
	if held, ok := l.Allow(t0.Add(3 * time.Second)); !ok || held != 0 {
		t.Fatalf("event after a quiet interval: held %d, passed %v; want 0, true", held, ok)
	}
}
