package coll

// bcastChunk is the pipelining unit of Broadcast: a member forwards chunk
// c to its children while its parent sends chunk c+1, so a large message
// crosses the tree in about depth + chunks steps instead of depth × size.
const bcastChunk = 32 << 10

// Broadcast copies nbytes at srcOff on member a.Root into dstOff on every
// member, the root included (shmem_broadcast). It is a binomial tree
// rooted at the root, pipelined in chunks; data goes straight into the
// children's destination, so it needs no scratch.
func (t *Team) Broadcast(a Args, dstOff, srcOff uint64, nbytes int) error {
	return named("Broadcast", t.broadcast(a, dstOff, srcOff, nbytes))
}

// broadcast is Broadcast, its errors as its steps returned them (see named).
func (t *Team) broadcast(a Args, dstOff, srcOff uint64, nbytes int) (err error) {
	const op = "Broadcast"
	seq, end, err := t.lockedBegin(op, &a)
	defer end.unlock(&err)
	if err != nil || nbytes == 0 {
		return err
	}
	local := t.local
	n, root := len(t.members), a.Root
	if t.me == root && dstOff != srcOff {
		copy(local[dstOff:dstOff+uint64(nbytes)], local[srcOff:srcOff+uint64(nbytes)])
	}
	if n == 1 {
		return nil
	}
	// Relative rank r: the parent clears r's lowest set bit, the children
	// add each lower power of two (largest subtree first).
	r := (t.me - root + n) % n
	mask := 1
	for mask < n && r&mask == 0 {
		mask <<= 1
	}
	parent := -1
	if r != 0 {
		parent = (r - mask + root) % n
	}
	var children []int
	for m := mask >> 1; m >= 1; m >>= 1 {
		if r+m < n {
			children = append(children, (r+m+root)%n)
		}
	}
	for c, lo := 0, 0; lo < nbytes; c, lo = c+1, lo+bcastChunk {
		hi := min(nbytes, lo+bcastChunk)
		if parent >= 0 {
			if err := t.waitFrom(op, parent, seq, c+1); err != nil {
				return err
			}
		}
		chunk := local[dstOff+uint64(lo) : dstOff+uint64(hi)]
		for _, ch := range children {
			if err := t.putSig(op, ch, dstOff+uint64(lo), chunk, enc(seq, c+1)); err != nil {
				return err
			}
		}
	}
	return nil
}
