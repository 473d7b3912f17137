package world

import (
	"context"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/rendezvous"
)

// exchange gives every PE every PE's record: through the rank-0
// rendezvous the unique ID names, or through gossip, which also assigns
// this PE its rank.
func (j *joiner) exchange(ctx context.Context, mine record) ([]record, error) {
	c := &j.cfg
	if c.Gossip != nil {
		return j.gossip(ctx, mine)
	}
	b, err := msgpack.Marshal(&mine)
	if err != nil {
		return nil, err
	}
	raw, err := rendezvous.Exchange(ctx, rendezvous.Config{
		Addr: c.UID.Addr, Rank: c.Rank, NPEs: c.NPEs, Secret: c.UID.Secret[:],
		ServerTLS: j.serverTLS, ClientTLS: j.clientTLS, Timeout: c.Timeout, Logger: j.log,
	}, b)
	if err != nil {
		return nil, errs.As("Init", c.Rank, err)
	}
	recs, err := decodeRecords(raw)
	if err != nil {
		return nil, j.fail(errs.ErrBootstrap, "%v", err)
	}
	return recs, nil
}
