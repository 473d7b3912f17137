package world

import (
	"context"
	"net"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/membership"
)

// GossipConfig forms a world without a launcher (shmem.WithSeeds).
type GossipConfig struct {
	// Seeds are host:port gossip addresses of members; any live one will do.
	Seeds []string
	// Bind is this member's gossip address, host:port. Default: the listen
	// host with a free port. A seed binds the address it is known by.
	Bind string
	// RankHint is this member's rank when a launcher gave one, else -1.
	RankHint int
}

// gossipVersion is checked by membership: processes of another protocol
// version are refused admission.
const gossipVersion = "goshmem-1"

func (j *joiner) gossip(ctx context.Context, mine record) ([]record, error) {
	c := &j.cfg
	g := c.Gossip
	bind := g.Bind
	if bind == "" {
		bind = net.JoinHostPort(mine.hostOf(), "0")
	}
	host, portStr, err := net.SplitHostPort(bind)
	if err != nil {
		return nil, j.fail(errs.ErrInvalidArgument, "gossip address %q: %v", bind, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, j.fail(errs.ErrInvalidArgument, "gossip port %q", portStr)
	}
	mine.Rank = -1
	meta, err := msgpack.Marshal(&mine)
	if err != nil {
		return nil, err
	}
	cfg := membership.DefaultConfig()
	cfg.JobID, cfg.Version, cfg.Secret = j.job, gossipVersion, c.UID.Secret[:]
	cfg.NPEs, cfg.RankHint = c.NPEs, g.RankHint
	cfg.BindAddr, cfg.BindPort, cfg.AdvertiseAddr = host, port, host
	cfg.Seeds, cfg.Meta, cfg.Logger, cfg.FormTimeout = g.Seeds, meta, j.log, c.Timeout
	w, err := j.formInRange(ctx, cfg)
	if err != nil {
		return nil, err
	}
	j.gossipWorld = w
	members := w.Members()
	raw := make([][]byte, len(members))
	for r, m := range members {
		raw[r] = m.Meta
	}
	recs, err := decodeGossipRecords(raw)
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "gossip members' records: %v", err)
	}
	c.Rank = w.Self().Rank
	return recs, nil
}

// hostOf returns the host part of the record's control address.
func (r record) hostOf() string {
	h, _, err := net.SplitHostPort(r.Control)
	if err != nil {
		return "127.0.0.1"
	}
	return h
}
