package world

import (
	"errors"

	"github.com/goshmem/shmem/internal/errs"
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
// does not grow.
func (j *joiner) heapLimit() int {
	if j.cfg.HeapLimit <= j.cfg.HeapSize {
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

// growOwn makes this PE's heap size bytes long (core.Config.Grow), and
// registers them with the NIC when the fabric provider runs: a peer may
// write there as soon as the allocation is agreed.
func (j *joiner) growOwn(size int64) error {
	if err := j.seg.Grow(int(size)); err != nil {
		return err
	}
	if j.fab != nil {
		return j.fab.GrowHeap(int(size))
	}
	return nil
}

// growPeers maps the grown part of every same-host peer's heap
// (core.Config.Grown). A peer whose file is short cannot be reached in its
// new segment; it is reported failed rather than left to fault a put.
func (j *joiner) growPeers(size int64) {
	j.fabricGrown(size)
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

// fabricGrown gives the fabric node every peer's registration of its grown
// heap. Each PE registered its own in growOwn, before proposing, but the
// heap agreement's payloads must be equal on every PE, so the keys, which
// differ, travel in a second round of their own ("fabric-heap", numbered
// by the size, which only grows): every PE takes part, since every PE ran
// the same heap agreement. A PE whose registration does not arrive cannot
// be reached in its grown part; it is reported failed rather than left to
// refuse puts there with a range error.
func (j *joiner) fabricGrown(size int64) {
	if j.fab == nil {
		return
	}
	c := &j.cfg
	all, err := j.p.Agree("Malloc", "fabric-heap", uint64(size), worldRanks(c.NPEs), c.Rank, j.fab.Address())
	if err != nil {
		// The round failed because a PE did (the lane reports it); the
		// others' grown parts stay unreachable from here.
		j.log.Error("fabric: the peers' grown heap registrations did not arrive", "bytes", size, "err", err)
		return
	}
	addrs := make([][]byte, len(all))
	for r, b := range all {
		if r < len(j.recs) && j.fabricPeer(r, j.recs[r], j.via) {
			addrs[r] = b
		}
	}
	if err := j.fab.UpdatePeers(addrs); err != nil {
		var e *errs.Error
		if errors.As(err, &e) && e.Target >= 0 {
			j.log.Error("fabric: a peer's grown heap registration is unusable", "peer", e.Target, "err", err)
			j.p.NotifyFailed(e.Target, "its grown heap registration is unusable: "+err.Error())
			return
		}
		j.log.Error("fabric: updating the peers' heap registrations", "err", err)
	}
}
