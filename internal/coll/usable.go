package coll

import "fmt"

// Usable returns nil when op can run on t, else why not (a nil or
// destroyed team, a finalized PE), naming op.
func (t *Team) Usable(op string) error {
	if t == nil {
		return t.usable(op)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usable(op)
}

// Destroyed reports whether t was destroyed; false for a nil team.
func (t *Team) Destroyed() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.a.Destroyed()
}

// Gone reports, without waiting for a collective on t to end, whether
// Destroy has run on t; false for a nil team. For the hot path of t's
// contexts: one atomic load.
func (t *Team) Gone() bool { return t != nil && t.gone.Load() }

// nonNegative refuses a negative extra split parameter.
func nonNegative(extra []int64) error {
	for _, e := range extra {
		if e < 0 {
			return fmt.Errorf("team config value %d", e)
		}
	}
	return nil
}
