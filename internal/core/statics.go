package core

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// StaticsSize returns the size of this PE's statics region
// (Config.Statics), 0 without one.
func (p *PE) StaticsSize() int { return len(p.s.cfg.Statics) }

// StaticsPath returns the path that reaches pe's statics region and the
// offset at which the region begins on it, with Path's checks and errors:
// the network path to pe (TCP, direct or relayed, or the fabric
// provider's), whose peer serves or registers its region from
// transport.StaticsBase; for this PE itself, a path over its own region,
// from 0. A peer whose heap is mapped here has none: a binding maps a
// same-host peer's statics itself.
func (p *PE) StaticsPath(op string, pe int) (path transport.Path, base uint64, err error) {
	path, err = p.checkedPath(op, pe)
	if err != nil {
		return nil, 0, err
	}
	if p.s.statics == nil {
		return nil, 0, errs.New(op, p.s.cfg.Rank, pe, errs.ErrInvalidArgument, "this world has no statics region")
	}
	r := p.worldRank(pe)
	if r == p.s.cfg.Rank {
		return p.s.statics, 0, nil // not the PE's own path, which maps its heap
	}
	switch k := p.s.pathKind(r); k {
	case PathTCP, PathRelay, PathFabric:
		return path, transport.StaticsBase, nil
	default:
		return nil, 0, errs.New(op, p.s.cfg.Rank, pe, errs.ErrInvalidArgument,
			"PE %d's statics are not reachable over its path (%s): only the network paths (TCP, relay, fabric) carry statics", pe, k)
	}
}
