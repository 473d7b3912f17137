package membership

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/goshmem/shmem/internal/errs"
)

// Form joins the world cfg describes and returns once all cfg.NPEs processes
// are alive and every one of them published the same rank table. It fails
// with an error wrapping errs.ErrBootstrap (and errs.ErrTimeout on timeout,
// naming how many processes were seen and which ranks are missing), or
// ErrInvalidArgument for a bad Config. On error nothing is left running.
func Form(ctx context.Context, cfg Config) (*World, error) {
	c, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	n := newNode(c, time.Now().UnixNano())
	ml, err := memberlist.Create(memberlistConfig(c, n))
	if err != nil {
		return nil, errs.New("Form", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "starting gossip on %s:%d: %v",
			c.BindAddr, c.BindPort, err)
	}
	addr := ml.LocalNode().Address()
	n.mu.Lock()
	n.self.Addr = addr // delegates read self under mu
	n.mu.Unlock()
	w, err := n.form(ctx, ml)
	if err != nil {
		_ = ml.Shutdown()
		return nil, err
	}
	return w, nil
}

// memberlistConfig maps Config onto memberlist's.
func memberlistConfig(c Config, n *node) *memberlist.Config {
	mc := memberlist.DefaultLANConfig()
	mc.Name = c.Name
	mc.BindAddr = c.BindAddr
	mc.BindPort = c.BindPort
	mc.AdvertiseAddr = c.AdvertiseAddr
	mc.AdvertisePort = c.BindPort // replaced by the picked port when 0
	mc.SecretKey = gossipKey(c.Secret)
	mc.ProbeInterval = c.ProbeInterval
	mc.ProbeTimeout = c.ProbeTimeout
	mc.SuspicionMult = c.SuspicionMult
	mc.GossipInterval = c.GossipInterval
	mc.PushPullInterval = c.PushPullInterval
	mc.TCPTimeout = 5 * time.Second // a stalled (GC, loaded CPU) peer must not fail push-pull at once
	mc.Delegate = n
	mc.Events = n
	mc.Alive = n
	mc.Merge = n
	mc.Logger = newStdLogger(c.Logger, c.Name)
	return mc
}

// form runs the join/compute/publish/seal loop. It re-evaluates the view on
// every membership event and also every JoinInterval, and while its table is
// unsealed it re-announces its hash every PushPullInterval: on a loaded host
// UDP gossip is dropped, and each member seals only after it has seen every
// other member's current hash, so one lost update must not leave the others
// waiting for the next push-pull to happen to carry it.
func (n *node) form(ctx context.Context, ml *memberlist.Memberlist) (*World, error) {
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, n.cfg.FormTimeout)
	defer cancel()
	joinCtx, stopJoin := context.WithCancel(ctx)
	joined := make(chan struct{})
	go func() {
		defer close(joined)
		n.joinLoop(joinCtx, ml, n.otherSeeds())
	}()
	// The joiner must be gone before the caller may shut memberlist down.
	defer func() { stopJoin(); <-joined }()
	tick := time.NewTicker(n.cfg.JoinInterval)
	defer tick.Stop()
	var lastPublish time.Time
	refresh := false
	for {
		res := n.step()
		if res.err != nil {
			return nil, res.err
		}
		if res.publish || (refresh && !res.done) {
			refresh = false
			n.publish(ml)
			lastPublish = time.Now()
			if !res.done {
				continue // a new own hash may already complete agreement (e.g. a world of one)
			}
		}
		if res.done {
			w := newWorld(n, ml)
			n.cfg.Logger.Info("membership: world formed", "job", n.cfg.JobID, "node", n.self.Name,
				"rank", w.self, "npes", n.cfg.NPEs, "elapsed", time.Since(started))
			return w, nil
		}
		select {
		case <-ctx.Done():
			return nil, n.formError(ctx.Err())
		case <-n.changed:
		case <-tick.C:
			refresh = n.hasPublished() && time.Since(lastPublish) >= n.cfg.PushPullInterval
		}
	}
}

// publish hands this process's current header to memberlist, which gossips
// it under a new incarnation. It waits at most one gossip period for the
// first transmission, so that a loaded host does not hold up the loop.
func (n *node) publish(ml *memberlist.Memberlist) {
	if err := ml.UpdateNode(n.cfg.GossipInterval); err != nil {
		n.cfg.Logger.Debug("membership: metadata update not yet gossiped", "node", n.self.Name, "err", err)
	}
}

// hasPublished reports whether this process announces a table hash.
func (n *node) hasPublished() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.self.Hdr.Hash != [32]byte{}
}

// otherSeeds drops this process's own address from the seed list.
func (n *node) otherSeeds() []string {
	out := make([]string, 0, len(n.cfg.Seeds))
	for _, s := range n.cfg.Seeds {
		host, port, _ := net.SplitHostPort(s) // validated in resolve
		if net.JoinHostPort(host, port) == n.self.Addr {
			continue
		}
		out = append(out, s)
	}
	return out
}

// joinLoop re-joins every JoinInterval while this view holds fewer than
// npes processes (every JoinInterval/5 until a first join succeeds, since
// processes started together find their seeds not yet listening). Each
// attempt contacts one process, drawn from the seeds and the peers already
// known, so that a job's processes do not all load the seeds with full
// state exchanges.
func (n *node) joinLoop(ctx context.Context, ml *memberlist.Memberlist, seeds []string) {
	t := time.NewTimer(0)
	defer t.Stop()
	joinedOnce := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := n.cfg.JoinInterval
		if target, ok := n.joinTarget(seeds); ok {
			if _, err := ml.Join([]string{target}); err != nil {
				n.cfg.Logger.Debug("membership: join failed, retrying", "node", n.self.Name, "err", err)
			} else {
				joinedOnce = true
			}
		}
		if !joinedOnce {
			wait /= 5
		}
		t.Reset(wait)
	}
}

// joinTarget picks whom to join, or reports that the view is complete.
func (n *node) joinTarget(seeds []string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.peers)+1 >= n.cfg.NPEs {
		return "", false
	}
	k := len(seeds) + len(n.peers)
	if k == 0 {
		return "", false
	}
	i := rand.IntN(k)
	if i < len(seeds) {
		return seeds[i], true
	}
	i -= len(seeds)
	for _, p := range n.peers {
		if i == 0 {
			return p.Addr, true
		}
		i--
	}
	return "", false
}

// stepResult is what one evaluation of the view asks the loop to do.
type stepResult struct {
	publish bool // metadata changed: gossip it
	done    bool // sealed
	err     error
}

// step evaluates the current view: adopt a table a member already sealed,
// or compute this view's table and publish its hash, or seal when every
// member publishes the same hash.
func (n *node) step() stepResult {
	n.mu.Lock()
	defer n.mu.Unlock()
	view := n.viewLocked()
	if t := n.adoptableLocked(); t != nil {
		n.sealLocked(t)
		return stepResult{publish: true, done: true}
	}
	if k := countEarlier(view, &n.self); k >= n.cfg.NPEs {
		return stepResult{err: errs.New("Form", errs.NoPE, errs.NoPE, errs.ErrBootstrap,
			"job %q: refused as PE %d of %d: %d processes started earlier (%v)",
			n.cfg.JobID, k+1, n.cfg.NPEs, k, errWorldFull)}
	}
	members := selectMembers(view, n.cfg.NPEs)
	if members == nil {
		return stepResult{}
	}
	table := assignRanks(members)
	h := tableHash(n.cfg.JobID, n.cfg.Version, table)
	if h != n.self.Hdr.Hash {
		n.self.Hdr.Hash = h
		n.history[h] = table
		n.cfg.Logger.Debug("membership: publishing table", "node", n.self.Name, "hash", fmt.Sprintf("%x", h[:4]),
			"table", names(table))
		return stepResult{publish: true}
	}
	for i := range table {
		if table[i].Name == n.self.Name {
			continue
		}
		if p, ok := n.peers[table[i].Name]; !ok || p.Hdr.Hash != h {
			return stepResult{}
		}
	}
	n.sealLocked(table)
	return stepResult{publish: true, done: true}
}

// adoptableLocked returns a table that a member sealed and this process
// once published (so every member of it agreed), or nil.
func (n *node) adoptableLocked() []candidate {
	for name, p := range n.peers {
		if !p.Hdr.Sealed {
			continue
		}
		t, ok := n.history[p.Hdr.Hash]
		if ok && slices.ContainsFunc(t, func(c candidate) bool { return c.Name == name }) {
			return t
		}
	}
	return nil
}

// sealLocked fixes the table; members already gone are reported failed.
func (n *node) sealLocked(table []candidate) {
	n.sealed = true
	n.table = table
	n.self.Hdr.Sealed = true
	n.self.Hdr.Hash = tableHash(n.cfg.JobID, n.cfg.Version, table)
	n.rankOf = make(map[string]int, len(table))
	n.failed = make([]bool, len(table))
	for r := range table {
		n.rankOf[table[r].Name] = r
	}
	for r := range table {
		if n.down[table[r].Name] {
			n.reportLocked(r)
		}
	}
}

// formError explains why Form gave up.
func (n *node) formError(cause error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	view := n.viewLocked()
	sentinel := fmt.Errorf("%w: %w", errs.ErrBootstrap, cause)
	if cause == context.DeadlineExceeded {
		sentinel = fmt.Errorf("%w: %w", errs.ErrBootstrap, errs.ErrTimeout)
	}
	if len(view) < n.cfg.NPEs {
		return errs.New("Form", errs.NoPE, errs.NoPE, sentinel,
			"job %q: saw %d of %d processes (%s); missing ranks %v",
			n.cfg.JobID, len(view), n.cfg.NPEs, names(view), missingRanks(view, n.cfg.NPEs))
	}
	table := assignRanks(selectMembers(view, n.cfg.NPEs))
	var disagree []string
	for r := range table {
		if p, ok := n.peers[table[r].Name]; ok && p.Hdr.Hash != n.self.Hdr.Hash {
			disagree = append(disagree, "rank "+strconv.Itoa(r))
		}
	}
	return errs.New("Form", errs.NoPE, errs.NoPE, sentinel,
		"job %q: saw all %d processes but the tables did not agree (%s publish another)",
		n.cfg.JobID, n.cfg.NPEs, strings.Join(disagree, ", "))
}

func names(cs []candidate) string {
	s := make([]string, len(cs))
	for i := range cs {
		s[i] = cs[i].Name
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}
