package simnet

// The ready PEs are a list that pick samples, or with a model a min-heap
// by (clock, rank), so that picking the earliest costs log n at 16384 PEs.
//
// A PE is in the list exactly while its status is stReady, so neither
// function looks whether it is: every caller of addReady has just moved p
// to stReady from another status (yield from stRunning with the baton,
// ring, checkRound and unblock from stBlocked, rejoin from stReturned,
// Start from stIdle), and p leaves stReady only by removeReady (pick,
// Exit). Two goroutines of a PE cannot both add it: they take n.mu in
// turn, and the second finds p stReady, not stRunning or stBlocked, and
// parks (takeTurn). The guard these functions had hid such a broken
// transition: Quiet's landing loop yielded again after a yield that had
// returned without the baton (quiet, ops.go).
func (n *Net) addReady(p *pe) {
	p.readyIdx = len(n.ready)
	n.ready = append(n.ready, p)
	if n.cfg.Model != nil {
		n.readyUp(p.readyIdx)
	}
}

func (n *Net) removeReady(p *pe) {
	i := p.readyIdx
	last := len(n.ready) - 1
	n.readySwap(i, last)
	n.ready = n.ready[:last]
	p.readyIdx = -1
	if n.cfg.Model != nil && i < last {
		n.readyDown(i)
		n.readyUp(i)
	}
}

func (n *Net) readyLess(i, j int) bool {
	a, b := n.ready[i], n.ready[j]
	return a.clock < b.clock || (a.clock == b.clock && a.rank < b.rank)
}

func (n *Net) readySwap(i, j int) {
	n.ready[i], n.ready[j] = n.ready[j], n.ready[i]
	n.ready[i].readyIdx, n.ready[j].readyIdx = i, j
}

func (n *Net) readyUp(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !n.readyLess(i, parent) {
			return
		}
		n.readySwap(i, parent)
		i = parent
	}
}

func (n *Net) readyDown(i int) {
	for {
		l := 2*i + 1
		if l >= len(n.ready) {
			return
		}
		m := l
		if r := l + 1; r < len(n.ready) && n.readyLess(r, l) {
			m = r
		}
		if !n.readyLess(m, i) {
			return
		}
		n.readySwap(i, m)
		i = m
	}
}
