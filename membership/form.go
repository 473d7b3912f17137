package membership

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/lag"
)

// Form joins the world cfg describes and returns once all cfg.NPEs processes
// are alive and the table's leader sealed the rank table every one of them
// computed (see the package doc). It fails with an error wrapping
// errs.ErrBootstrap (and errs.ErrTimeout at cfg.FormTimeout, naming how many
// processes were seen and which ranks are missing, or which members did not
// agree; errs.ErrPEFailed, naming it, once a process this one saw died
// before sealing and nobody took its place), or ErrInvalidArgument for a
// bad Config. On error nothing is left running.
func Form(ctx context.Context, cfg Config) (*World, error) {
	c, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	n := newNode(c, time.Now().UnixNano())
	mc := memberlistConfig(c, n)
	tr, err := newStreamLimit(c.BindAddr, c.BindPort, maxStreams, streamBytes(c.NPEs), mc.Logger)
	if err != nil {
		// The cause stays wrapped: a port taken is syscall.EADDRINUSE.
		return nil, errs.New("Form", errs.NoPE, errs.NoPE, fmt.Errorf("%w: %w", err, errs.ErrBootstrap),
			"starting gossip on %s:%d", c.BindAddr, c.BindPort)
	}
	if c.BindPort == 0 {
		mc.BindPort = tr.GetAutoBindPort()
		mc.AdvertisePort = mc.BindPort
	}
	mc.Transport = tr
	n.streams = tr
	var ml *memberlist.Memberlist
	n.gang.run(func() { ml, err = memberlist.Create(mc) })
	if err != nil {
		_ = tr.Shutdown()
		n.awaitGang()
		return nil, errs.New("Form", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "starting gossip on %s:%d: %v",
			c.BindAddr, c.BindPort, err)
	}
	addr := ml.LocalNode().Address()
	n.mu.Lock()
	n.self.Addr = addr // delegates read self under mu
	n.ml = ml
	n.mu.Unlock()
	w, err := n.form(ctx, ml)
	if err != nil {
		n.closing.Store(true)
		_ = ml.Shutdown()
		n.awaitGang()
		return nil, err
	}
	return w, nil
}

// awaitGang waits, after memberlist's Shutdown, for the goroutines it
// started (gang). A probe in flight ends by its ProbeInterval, which
// memberlist stretches up to 8 times on a loaded host, and a stream in
// flight by TCPTimeout; beyond both something is stuck in memberlist, and
// the caller is not held up longer for it.
func (n *node) awaitGang() {
	limit := 8*n.cfg.ProbeInterval + cmp.Or(n.cfg.tcpTimeout, defaultTCPTimeout)
	if !n.gang.wait(limit) {
		n.cfg.Logger.Warn("membership: memberlist's goroutines still run after its shutdown", "job", n.cfg.JobID,
			"node", n.self.Name, "waited", limit)
	}
}

// defaultTCPTimeout is memberlist's TCPTimeout: a stalled (GC, loaded
// CPU) peer must not fail push-pull at once. It also bounds how long an
// inbound stream that sends nothing is held.
const defaultTCPTimeout = 5 * time.Second

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
	// No LZW: memberlist allocates and clears a 64 KiB compressor table
	// for every packet it sends, which on a loaded host (and ten times
	// more under -race) slowed forming 16 processes from under a second
	// to tens of seconds; the messages are a few hundred bytes.
	mc.EnableCompression = false
	mc.TCPTimeout = cmp.Or(c.tcpTimeout, defaultTCPTimeout)
	mc.Delegate = n
	mc.Events = n
	mc.Alive = n
	mc.Merge = n
	mc.Logger = newStdLogger(newSlogWriter(c.Logger, c.Name, &n.undecryptable, &n.closing))
	return mc
}

// form runs the join/evaluate/seal loop. It evaluates the view on every
// membership event and direct message and every JoinInterval; on the tick a
// member that has not sealed repeats an undelivered report, so a report
// lost to a loaded host costs one JoinInterval, not a gossip round. Direct
// messages are sent by an outbox that Form waits for before it returns, so
// a slow dial never holds up the loop and nothing outlives Form.
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
	out := &outbox{n: n, ml: ml}
	// The joiner and senders must be gone before the caller may shut
	// memberlist down. When Form gives up, their streams in flight are
	// cut first: a stalled peer would hold them for TCPTimeout.
	formed := false
	defer func() {
		stopJoin()
		if !formed && n.streams != nil {
			n.streams.abortDials()
		}
		<-joined
		out.wait()
	}()
	tick := time.NewTicker(n.cfg.JoinInterval)
	defer tick.Stop()
	grace := n.cfg.replaceGrace()
	lostTimer := time.NewTimer(grace)
	lostTimer.Stop()
	defer lostTimer.Stop()
	var lostC <-chan time.Time // armed while a dead member holds a place
	// A process too starved to answer probes is declared dead by the
	// others, and refutes once it runs again; so is this one, when it is
	// the starved one: the grace starts over while this process is
	// behind (internal/lag), so that a loaded host does not fail an Init
	// that a refutation would have saved.
	behind := lag.New(grace)
	resend, graceOver := false, false
	for {
		res := n.step(resend)
		resend = false
		if res.err != nil {
			return nil, res.err
		}
		switch {
		case len(res.lost) == 0:
			lostC, graceOver = nil, false
		case graceOver:
			return nil, n.lostError(res.lost, grace)
		case lostC == nil:
			behind.Behind(time.Now()) // takes stock for the look at the end
			lostTimer.Reset(grace)
			lostC = lostTimer.C
		}
		out.send(res.sends)
		if res.publish {
			n.publish(ml)
		}
		if res.done {
			out.wait() // the leader's seals are out before its Form returns
			formed = true
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
			resend = out.reportDue()
		case <-lostC:
			if behind.Behind(time.Now()) {
				lostTimer.Reset(grace)
			} else {
				lostC, graceOver = nil, true
			}
		}
	}
}

// publish hands this process's sealed header to memberlist, which gossips
// it under a new incarnation: members whose seal message was lost adopt the
// table from it. It waits at most one gossip period for the first
// transmission, so that a loaded host does not hold up Form.
func (n *node) publish(ml *memberlist.Memberlist) {
	if err := ml.UpdateNode(n.cfg.GossipInterval); err != nil {
		n.cfg.Logger.Debug("membership: metadata update not yet gossiped", "node", n.self.Name, "err", err)
	}
}

// otherSeeds drops this process's own address from the seed list.
func (n *node) otherSeeds() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.otherSeedsLocked()
}

func (n *node) otherSeedsLocked() []string {
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
	joined := false // a join ever succeeded (noteJoin)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wait := n.cfg.JoinInterval
		if target, ok := n.joinTarget(seeds); ok {
			_, err := ml.Join([]string{target})
			if err != nil {
				n.cfg.Logger.Debug("membership: join failed, retrying", "node", n.self.Name, "err", err)
			}
			joined = n.noteJoin(err)
		}
		if !joined {
			wait /= 5
		}
		t.Reset(wait)
	}
}

// joinTarget picks whom to join, or reports that the view is complete. A
// process that reported to this one has a complete view, so one join with
// it completes this one: reporters are preferred.
func (n *node) joinTarget(seeds []string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.liveLocked()) >= n.cfg.NPEs {
		return "", false
	}
	for _, r := range n.reports { // map order: a random reporter
		if r.addr != "" {
			return r.addr, true
		}
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
