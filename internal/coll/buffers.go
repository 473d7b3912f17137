package coll

// buffers is a team's working memory for its operations, in Go memory
// (the symmetric heap's scratch is layout.scratch). An operation runs with
// t.mu held, so one set per team serves every call, and a collective
// allocates nothing in its steady state (issue 17): each of these, made
// per call, was an allocation per member per call.
type buffers struct {
	// entry is what begin sends in each round of the entry. An array on
	// the stack escapes through transport.Path's PutSignal (an interface
	// call), and Put lets the caller reuse src once it returns. It is an
	// allocation of its own, holding no pointer: the fabric provider hands
	// a small put's source to C (FI_INJECT), and cgo refuses memory that
	// shares an object with Go pointers (off, ln and pack beside it).
	entry *[24]byte
	// off and ln are allgatherv's blocks (FCollect, Collect): the offset
	// and length of each member's, one of each per member.
	off, ln []int
	// pack stages Alltoalls' strided source blocks for one put each. It
	// grows on the first such call to at most packMax bytes and stays.
	pack []byte
}

// packMax bounds buffers.pack: a block larger than that goes out in puts
// of packMax bytes, so a team keeps at most this much for Alltoalls.
const packMax = 64 << 10

func newBuffers(n int) buffers {
	return buffers{entry: new([24]byte), off: make([]int, n), ln: make([]int, n)}
}
