package world

import (
	"context"
	"fmt"
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
	host, advertise, port, err := gossipAddrs(bind, mine.hostOf())
	if err != nil {
		return nil, j.fail(errs.ErrInvalidArgument, "%v", err)
	}
	mine.Rank = -1
	meta, err := msgpack.Marshal(&mine)
	if err != nil {
		return nil, err
	}
	cfg := membership.DefaultConfig()
	cfg.JobID, cfg.Version, cfg.Secret = j.job, gossipVersion, c.UID.Secret[:]
	cfg.NPEs, cfg.RankHint = c.NPEs, g.RankHint
	cfg.BindAddr, cfg.BindPort, cfg.AdvertiseAddr = host, port, advertise
	cfg.Seeds, cfg.Meta, cfg.Logger, cfg.FormTimeout = g.Seeds, meta, j.log, c.Timeout
	w, err := j.formInRange(ctx, cfg)
	if err != nil {
		// Init's error, as the rendezvous's are: "Init: in Form: ...".
		pe := errs.NoPE // the rank comes from the formed world
		if g.RankHint >= 0 {
			pe = g.RankHint
		}
		return nil, errs.As("Init", pe, err)
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

// gossipAddrs splits this member's gossip address (SHMEM_GOSSIP_ADDR) into
// the host to bind, the host the others are told, and the port. A host
// that binds every interface (0.0.0.0, ::) is no address to reach it at:
// told to the others as it was, each dialled itself on another host. It
// advertises the control listener's host instead, which every PE reaches
// already.
func gossipAddrs(bind, controlHost string) (host, advertise string, port int, err error) {
	host, portStr, err := net.SplitHostPort(bind)
	if err != nil {
		return "", "", 0, fmt.Errorf("gossip address %q: %v", bind, err)
	}
	port, err = strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", "", 0, fmt.Errorf("gossip address %q: bad port", bind)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", "", 0, fmt.Errorf("gossip address %q: the host must be an IP address", bind)
	}
	if !ip.IsUnspecified() {
		return host, host, port, nil
	}
	advertise = controlHost
	if ip := net.ParseIP(advertise); ip == nil || ip.IsUnspecified() {
		return "", "", 0, fmt.Errorf("gossip address %q: the others need an IP address to reach this member at, and the control listener's host %q is none", bind, controlHost)
	}
	return host, advertise, port, nil
}

// hostOf returns the host part of the record's control address.
func (r record) hostOf() string {
	h, _, err := net.SplitHostPort(r.Control)
	if err != nil {
		return "127.0.0.1"
	}
	return h
}
