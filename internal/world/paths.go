package world

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/udma"
)

// makePaths returns the data path to every PE: a mapping for PEs on this host,
// the network for the others (the fabric node's when it runs, netPath),
// through a relay where via says so (always TCP: the fabric cannot relay).
// When this PE relays for others to a PE it maps or reaches by the fabric,
// it also opens a TCP path to that PE, because relayed frames travel on
// TCP paths only.
func (j *joiner) makePaths(recs []record, via [][]int) ([]transport.Path, []int, error) {
	c := &j.cfg
	fence := new(atomic.Uint64)
	paths := make([]transport.Path, c.NPEs)
	var shared []int
	j.peers = make([]*udma.Segment, c.NPEs)
	for r, rec := range recs {
		switch {
		case r == c.Rank:
			paths[r] = udma.NewPath(j.seg.Reservation(), j.bell, fence, true)
			shared = append(shared, r)
		case via[c.Rank][r] != direct:
			v := via[c.Rank][r]
			j.log.Info("relaying", "peer", r, "via", v)
			paths[r] = j.node.RelayPath(r, v, recs[v].Data)
		case j.sameHost(rec):
			pid := rec.PID
			seg, err := openPeer(j.job, r, int(c.HeapSize), j.heapLimit(), c.Timeout, func() error { return j.peerGone(r, pid) })
			if errors.Is(err, errs.ErrPEFailed) {
				return nil, nil, err
			}
			if err != nil {
				return nil, nil, j.fail(errs.ErrBootstrap, "mapping the heap of PE %d: %v", r, err)
			}
			j.peers[r] = seg
			paths[r] = udma.NewPath(seg.Reservation(), seg.Bell(), fence, true)
			shared = append(shared, r)
		default:
			p, err := j.netPath(r, rec)
			if err != nil {
				return nil, nil, err
			}
			paths[r] = p
		}
	}
	for a := range via {
		for b, v := range via[a] {
			if v == c.Rank && (j.peers[b] != nil || j.fabricPeer(b, recs[b], via)) {
				j.node.Path(b, recs[b].Data)
			}
		}
	}
	return paths, shared, nil
}

// openPeer maps a peer's segment, waiting while its owner is still
// creating it: owners create their segments right after the exchange, so
// the wait is short, unless the owner died first: gone, asked between
// attempts, says so with its error.
func openPeer(job string, rank, size, limit int, timeout time.Duration, gone func() error) (*udma.Segment, error) {
	deadline := time.Now().Add(timeout)
	for delay := 50 * time.Microsecond; ; delay = min(2*delay, 10*time.Millisecond) {
		seg, err := udma.Open(job, rank, size)
		if limit > size {
			seg, err = udma.OpenGrowable(job, rank, size, limit)
		}
		// A segment seen mid-creation is short or has no header yet;
		// only the deadline tells it from a bad one.
		if err == nil || time.Now().After(deadline) {
			return seg, err
		}
		if gerr := gone(); gerr != nil {
			return nil, gerr
		}
		time.Sleep(delay)
	}
}
