package coll

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
