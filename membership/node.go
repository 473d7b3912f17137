package membership

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/memberlist"
)

// maxRejectLog bounds the set of refused names remembered to log each only
// once; names come from the network, so the set must not grow without end.
const maxRejectLog = 1024

// node is one process's membership state, shared by the memberlist
// delegates (called on memberlist's goroutines) and Form's loop.
type node struct {
	cfg  Config
	self candidate // Hdr.Hash, Hdr.Sealed and Hdr.Leaving change under mu; Addr set after Create

	changed chan struct{} // capacity 1: pokes Form's loop

	mu       sync.Mutex
	ml       *memberlist.Memberlist // set after Create; answers late reports
	peers    map[string]candidate   // admitted, not self; kept when down until sealed
	down     map[string]bool        // peers memberlist last saw dead or left
	history  map[[32]byte][]candidate
	current  [32]byte          // hash of the table this view last computed
	leader   candidate         // rank 0 of that table
	reports  map[string]report // latest report per sender, received before sealing
	offer    sealOffer         // the last seal message received
	seq      uint64            // counter of messages sent
	replies  sync.WaitGroup    // seal replies in flight; Close waits for them
	sealed   bool
	table    []candidate
	rankOf   map[string]int
	failed   []bool
	leavers  map[string]bool // table members that announced a graceful departure (kindLeaving)
	failures chan int
	closed   bool
	rejected map[string]refusal // name -> the last refusal logged
	// joinedOnce and joinErr say whether a join ever succeeded and why
	// the last one failed: Form's error names seeds nobody could reach.
	joinedOnce bool
	joinErr    string
	// undecryptable counts gossip messages and joins that failed because
	// the peer's key is not this job's: Form's error says so, since a
	// process with another secret is otherwise just never seen.
	undecryptable atomic.Int64
	// closing is set before memberlist is shut down: its errors about
	// the connections it closes are then no failures (slogWriter).
	closing atomic.Bool
	// streams is the gossip transport, its inbound streams bounded.
	streams *streamLimit
	// gang marks memberlist's goroutines, so that Form's failure and
	// Close return only once they have ended.
	gang gang
}

func newNode(cfg Config, incarnation int64) *node {
	n := &node{
		cfg:      cfg,
		changed:  make(chan struct{}, 1),
		peers:    make(map[string]candidate),
		down:     make(map[string]bool),
		history:  make(map[[32]byte][]candidate),
		reports:  make(map[string]report),
		leavers:  make(map[string]bool),
		failures: make(chan int, cfg.NPEs),
		rejected: make(map[string]refusal),
	}
	n.gang = newGang(n)
	n.self = candidate{Name: cfg.Name, Hdr: header{
		Hint: cfg.RankHint, NPEs: cfg.NPEs, Incarnation: incarnation,
		JobID: cfg.JobID, Version: cfg.Version, Meta: cfg.Meta,
	}}
	return n
}

func (n *node) poke() {
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// admitLocked decides whether a process may be in this view.
func (n *node) admitLocked(name string, h *header) error {
	if name == n.self.Name {
		return nil
	}
	switch {
	case h.JobID != n.cfg.JobID:
		return fmt.Errorf("it belongs to job %q, this is job %q", h.JobID, n.cfg.JobID)
	case h.Version != n.cfg.Version:
		return fmt.Errorf("it runs version %q, this job runs %q", h.Version, n.cfg.Version)
	case h.NPEs != n.cfg.NPEs:
		return fmt.Errorf("it expects %d PEs, this job has %d", h.NPEs, n.cfg.NPEs)
	}
	if n.sealed {
		if _, ok := n.rankOf[name]; !ok {
			return fmt.Errorf("the world is sealed with all %d PEs", n.cfg.NPEs)
		}
		return nil
	}
	c := candidate{Name: name, Hdr: *h}
	if k := countEarlier(n.liveLocked(), &c); k >= n.cfg.NPEs {
		return fmt.Errorf("the world is full: %d of %d PEs started before it", k, n.cfg.NPEs)
	}
	return nil
}

// viewLocked is self plus the admitted peers.
func (n *node) viewLocked() []candidate {
	v := make([]candidate, 0, len(n.peers)+1)
	v = append(v, n.self)
	for _, c := range n.peers {
		v = append(v, c)
	}
	return v
}

// liveLocked is self plus the admitted peers memberlist does not report
// dead or gone.
func (n *node) liveLocked() []candidate {
	v := make([]candidate, 0, len(n.peers)+1)
	v = append(v, n.self)
	for name, c := range n.peers {
		if !n.down[name] {
			v = append(v, c)
		}
	}
	return v
}

// candidatesLocked is the view a table is chosen from: the live processes
// when they are npes or more, else every process seen. A peer reported
// dead stays a candidate while nobody can take its place, since on a
// loaded host memberlist declares live processes dead that refute moments
// later; but it gives way to a live one (a process restarted in place of
// one killed before the table was sealed), which would otherwise be
// refused as one too many while the dead one held its place in every
// table, and no table could seal.
func (n *node) candidatesLocked() []candidate {
	if live := n.liveLocked(); len(live) >= n.cfg.NPEs {
		return live
	}
	return n.viewLocked()
}

// logRejectLocked logs a refusal once per name and reason.
func (n *node) logRejectLocked(name, addr string, err error) {
	if n.rejected[name].reason == err.Error() {
		return
	}
	if _, ok := n.rejected[name]; ok || len(n.rejected) < maxRejectLog {
		n.rejected[name] = refusal{reason: err.Error(), addr: addr}
	}
	n.cfg.Logger.Warn("membership: refused process", "job", n.cfg.JobID, "node", n.self.Name,
		"peer", name, "addr", addr, "reason", err.Error())
}

// check decodes and admits one memberlist node.
func (n *node) check(p *memberlist.Node) (header, error) {
	h, err := decodeHeader(p.Meta)
	n.mu.Lock()
	defer n.mu.Unlock()
	if err == nil {
		err = n.admitLocked(p.Name, &h)
	}
	if err != nil {
		n.logRejectLocked(p.Name, p.Address(), err)
	}
	return h, err
}

// NotifyAlive implements memberlist.AliveDelegate: refused processes never
// enter the view.
func (n *node) NotifyAlive(p *memberlist.Node) error {
	_, err := n.check(p)
	return err
}

// NotifyMerge implements memberlist.MergeDelegate. It cancels a join with a
// process of another job, version or size outright; for capacity it cancels
// only when the other side brings no process this view would admit, since
// individual refusals are left to NotifyAlive.
func (n *node) NotifyMerge(peers []*memberlist.Node) error {
	var firstErr error
	admitted := 0
	for _, p := range peers {
		if p.State != memberlist.StateAlive && p.State != memberlist.StateSuspect {
			continue
		}
		h, err := n.check(p)
		if err == nil {
			admitted++
			continue
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("refusing %s: %w", p.Name, err)
		}
		if h.JobID != n.cfg.JobID || h.Version != n.cfg.Version || h.NPEs != n.cfg.NPEs {
			return firstErr
		}
	}
	if admitted == 0 && firstErr != nil {
		return firstErr
	}
	return nil
}

// NotifyJoin, NotifyUpdate and NotifyLeave implement memberlist.EventDelegate.
func (n *node) NotifyJoin(p *memberlist.Node)   { n.upsert(p) }
func (n *node) NotifyUpdate(p *memberlist.Node) { n.upsert(p) }

func (n *node) upsert(p *memberlist.Node) {
	if p.Name == n.self.Name {
		return
	}
	h, err := decodeHeader(p.Meta) // admitted by NotifyAlive already
	if err != nil {
		return
	}
	n.mu.Lock()
	n.peers[p.Name] = candidate{Name: p.Name, Addr: p.Address(), Hdr: h}
	delete(n.down, p.Name)
	n.mu.Unlock()
	if n.cfg.onPeer != nil {
		n.cfg.onPeer(p.Name)
	}
	n.poke()
}

func (n *node) NotifyLeave(p *memberlist.Node) {
	if p.Name == n.self.Name {
		return
	}
	// Before sealing a peer stays a candidate: on a loaded host memberlist
	// falsely declares live processes dead and they refute moments later;
	// dropping them would change every view's table each time. A table
	// member really gone at sealing is reported failed then; one gone
	// before, whose place nobody takes within a grace, ends Form (lost.go).
	n.mu.Lock()
	if _, ok := n.peers[p.Name]; ok {
		n.down[p.Name] = true
	}
	// A member that left through World.Leave (a PE calls it as it
	// finalizes) did not fail: its last messages may still be on their way
	// to peers that are finishing their own Finalize. memberlist does not
	// say which departures were graceful (p.State is never set), so Leave
	// first tells every member directly (kindLeaving) and gossips a header
	// marked Leaving, p.Meta being the last header gossiped. A member found
	// dead, or gone without either, is reported.
	if r, ok := n.rankOf[p.Name]; ok && n.sealed && !leaving(p.Meta) && !n.leavers[p.Name] {
		n.reportFailedLocked(r)
	}
	n.mu.Unlock()
	n.poke()
}

// leaving says whether a member's last header announced its departure.
func leaving(meta []byte) bool {
	h, err := decodeHeader(meta)
	return err == nil && h.Leaving
}

// reportFailedLocked announces a failed rank once.
func (n *node) reportFailedLocked(r int) {
	if n.failed[r] || n.closed {
		return
	}
	n.failed[r] = true
	n.cfg.Logger.Warn("membership: PE failed or left", "job", n.cfg.JobID, "node", n.self.Name, "rank", r,
		"peer", n.table[r].Name)
	n.failures <- r // capacity npes, each rank at most once: never blocks
}

// NodeMeta and the rest implement memberlist.Delegate; only the metadata is used.
func (n *node) NodeMeta(limit int) []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	b := n.self.Hdr.encode(make([]byte, 0, n.self.Hdr.size()))
	if len(b) > limit {
		return nil // unreachable: resolve checked the size
	}
	return b
}
func (n *node) GetBroadcasts(int, int) [][]byte     { return nil }
func (n *node) LocalState(bool) []byte              { return nil }
func (n *node) MergeRemoteState(buf []byte, _ bool) {}

var errWorldFull = errors.New("world full")
