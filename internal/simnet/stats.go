package simnet

import "sort"

// Link is the traffic from one PE to another.
type Link struct {
	From, To int
	Messages int64
	Bytes    int64
}

type stats struct {
	links map[[2]int32]*Link
}

func (s *stats) init(npes int) { s.links = map[[2]int32]*Link{} }

func (s *stats) count(from, to, size int) {
	k := [2]int32{int32(from), int32(to)}
	l := s.links[k]
	if l == nil {
		l = &Link{From: from, To: to}
		s.links[k] = l
	}
	l.Messages++
	l.Bytes += int64(size)
}

// Result is what a finished world measured.
type Result struct {
	// Clocks are the PEs' virtual times in nanoseconds when their function
	// returned (zero without a model).
	Clocks []float64
	// Ops counts each PE's goshmem calls.
	Ops   []int
	Links []Link
	// Marks are each PE's clocks at its Mark calls.
	Marks [][]float64
	// Calls are the team operations, by first entry.
	Calls []Call
	Steps uint64
	Seed  uint64
}

// Result returns the measurements so far; call it after every PE exited.
func (n *Net) Result() Result {
	n.mu.Lock()
	defer n.mu.Unlock()
	r := Result{Clocks: make([]float64, len(n.pes)), Ops: make([]int, len(n.pes)), Marks: make([][]float64, len(n.pes)), Steps: n.steps, Seed: n.cfg.Seed}
	for i, p := range n.pes {
		r.Marks[i] = p.marks
		r.Clocks[i] = p.clock
		if p.ended {
			r.Clocks[i] = p.end
		}
		r.Ops[i] = p.ops
	}
	r.Calls = n.sortedCalls()
	for _, l := range n.stats.links {
		r.Links = append(r.Links, *l)
	}
	sort.Slice(r.Links, func(i, j int) bool {
		a, b := r.Links[i], r.Links[j]
		return a.From < b.From || (a.From == b.From && a.To < b.To)
	})
	return r
}

// WritesInFlight returns how many writes the network holds, not landed
// yet (core.WritesHeld).
func (n *Net) WritesInFlight() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.inflight.writes
}
