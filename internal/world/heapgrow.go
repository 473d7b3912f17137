package world

import (
	"github.com/goshmem/shmem/transport/udma"
)

// A heap that grows (Config.HeapLimit): this PE's segment and its mappings
// of same-host peers' segments reserve the limit's address space, and each
// growth maps a further part of the files into it. The heap actor orders
// it: growOwn runs before the allocation that needs it is proposed (this
// PE's file is extended and mapped, and the TCP server accepts frames
// into it from then on), growPeers once it is agreed (every peer has
// extended its file by then), before the allocation returns.

// heapLimit is the limit segments are made with: HeapSize when the heap
// does not grow, as with the fabric provider, which registers the heap
// with the NIC once, at its initial size.
func (j *joiner) heapLimit() int {
	if j.cfg.HeapLimit <= j.cfg.HeapSize || j.fab != nil {
		return int(j.cfg.HeapSize)
	}
	return int(j.cfg.HeapLimit)
}

// createSegment creates this PE's segment, growable up to heapLimit.
func (j *joiner) createSegment() (*udma.Segment, error) {
	if limit := j.heapLimit(); limit > int(j.cfg.HeapSize) {
		return udma.CreateGrowable(j.job, j.cfg.Rank, int(j.cfg.HeapSize), limit)
	}
	return udma.Create(j.job, j.cfg.Rank, int(j.cfg.HeapSize))
}

// growOwn makes this PE's heap size bytes long (core.Config.Grow).
func (j *joiner) growOwn(size int64) error { return j.seg.Grow(int(size)) }

// growPeers maps the grown part of every same-host peer's heap
// (core.Config.Grown). A peer whose file is short cannot be reached in its
// new segment; it is reported failed rather than left to fault a put.
func (j *joiner) growPeers(size int64) {
	for r, seg := range j.peers {
		if seg == nil {
			continue
		}
		if err := seg.Grow(int(size)); err != nil {
			j.log.Error("cannot map a peer's grown heap", "peer", r, "err", err)
			j.p.NotifyFailed(r, "its grown heap could not be mapped: "+err.Error())
		}
	}
}
