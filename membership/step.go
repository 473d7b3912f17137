package membership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goshmem/shmem/internal/errs"
)

// send is one direct message the loop must deliver: m to the process at
// addr (a gossip address, host:port) named name.
type send struct {
	name, addr string
	m          msg
}

// stepResult is what one evaluation of the view asks the loop to do. step
// does no I/O, so the sealing rules are tested without sockets.
type stepResult struct {
	sends   []send // direct messages: a report to the leader, or seals to the members
	publish bool   // the header changed (sealed): gossip it
	done    bool   // sealed
	err     error
	// lost are the peers memberlist reports dead that hold a place in
	// this view's table (lostLocked): Form fails naming them unless a
	// live process takes their places within the replacement grace.
	lost []candidate
}

// report is the latest report a leader holds from one member.
type report struct {
	seq  uint64
	hash [32]byte
	addr string
}

// step evaluates the current view. In order: adopt a table that a member
// sealed (by a seal message or its gossiped header) if this process once
// computed it; refuse itself if npes processes started before it; else
// compute this view's table. A member that is not the table's leader (rank
// 0) reports its hash to the leader when it changes and, with resend, again;
// the leader seals once every other member's latest report carries its own
// hash, and then sends the seal to every member directly.
//
// With exactly npes processes every complete view yields the same table, so
// the leader seals one round trip after the last view completes. Only when
// more processes run than npes can a view change its table after reporting
// (a process that started earlier is discovered late); then the member
// reports again, to the new leader and the old one, and adopts the first
// seal it gets for a table it computed.
func (n *node) step(resend bool) stepResult {
	n.mu.Lock()
	defer n.mu.Unlock()
	res := n.stepLocked(resend)
	if !res.done && res.err == nil {
		res.lost = n.lostLocked()
	}
	return res
}

func (n *node) stepLocked(resend bool) stepResult {
	if n.sealed {
		return stepResult{done: true}
	}
	if t := n.adoptableLocked(); t != nil {
		n.sealLocked(t)
		return stepResult{publish: true, done: true}
	}
	if k := countEarlier(n.liveLocked(), &n.self); k >= n.cfg.NPEs {
		return stepResult{err: errs.New("Form", errs.NoPE, errs.NoPE, errs.ErrBootstrap,
			"job %q: refused: %d processes started earlier, so this one would be PE %d, and the world has %d PEs (ranks 0..%d) (%v)",
			n.cfg.JobID, k, k, n.cfg.NPEs, n.cfg.NPEs-1, errWorldFull)}
	}
	members := selectMembers(n.candidatesLocked(), n.cfg.NPEs)
	if members == nil {
		return stepResult{}
	}
	table := assignRanks(members)
	h := tableHash(n.cfg.JobID, n.cfg.Version, table)
	var res stepResult
	if h != n.current {
		n.cfg.Logger.Debug("membership: computed table", "node", n.self.Name, "hash", fmt.Sprintf("%x", h[:4]),
			"leader", table[0].Name, "table", names(table))
		old := n.leader
		n.current, n.leader = h, table[0]
		n.history[h] = table
		resend = true
		if old.Name != "" && old.Name != n.leader.Name && old.Name != n.self.Name {
			// Tell the old leader too, so it does not seal our old hash.
			res.sends = append(res.sends, n.reportLocked(old))
		}
	}
	if n.leader.Name != n.self.Name {
		if resend {
			res.sends = append(res.sends, n.reportLocked(n.leader))
		}
		return res
	}
	for _, c := range table[1:] {
		if r, ok := n.reports[c.Name]; !ok || r.hash != h {
			return res
		}
	}
	n.sealLocked(table)
	for _, c := range table[1:] {
		res.sends = append(res.sends, send{name: c.Name, addr: c.Addr, m: n.msgLocked(kindSeal, h)})
	}
	res.publish, res.done = true, true
	return res
}

// reportLocked builds the report of the current hash to c.
func (n *node) reportLocked(c candidate) send {
	return send{name: c.Name, addr: c.Addr, m: n.msgLocked(kindReport, n.current)}
}

// msgLocked stamps a message from this process with the next sequence number.
func (n *node) msgLocked(k msgKind, h [32]byte) msg {
	n.seq++
	return msg{Kind: k, Seq: n.seq, Hash: h, From: n.self.Name, Addr: n.self.Addr}
}

// adoptableLocked returns a table that a member sealed and this process
// once computed (so it was the table of every member's view), or nil. The
// seal is known from a seal message or from a member's gossiped header.
func (n *node) adoptableLocked() []candidate {
	inTable := func(h [32]byte, name string) []candidate {
		t, ok := n.history[h]
		if ok && slices.ContainsFunc(t, func(c candidate) bool { return c.Name == name }) {
			return t
		}
		return nil
	}
	if t := inTable(n.offer.hash, n.offer.from); t != nil {
		return t
	}
	for name, p := range n.peers {
		if p.Hdr.Sealed {
			if t := inTable(p.Hdr.Hash, name); t != nil {
				return t
			}
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
	n.current = n.self.Hdr.Hash
	n.rankOf = make(map[string]int, len(table))
	n.failed = make([]bool, len(table))
	for r := range table {
		n.rankOf[table[r].Name] = r
	}
	for r := range table {
		if n.down[table[r].Name] {
			n.reportFailedLocked(r)
		}
	}
}

// formError explains why Form gave up: how many processes this view saw and
// which ranks are missing, or, with a complete view, which members did not
// report the leader's table (at the leader) or that the leader sent no seal.
func (n *node) formError(cause error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	view := n.viewLocked()
	sentinel := fmt.Errorf("%w: %w", errs.ErrBootstrap, cause)
	if errors.Is(cause, context.DeadlineExceeded) {
		sentinel = fmt.Errorf("%w: %w", errs.ErrBootstrap, errs.ErrTimeout)
	}
	if len(view) < n.cfg.NPEs {
		missing := fmt.Sprintf("missing %d (ranks follow names, so which ranks is known only once all are seen)",
			n.cfg.NPEs-len(view))
		if ranks, known := missingRanks(view, n.cfg.NPEs); known {
			missing = fmt.Sprintf("missing ranks %v", ranks)
		}
		return errs.New("Form", errs.NoPE, errs.NoPE, sentinel, "job %q: saw %d of %d processes (%s); %s%s%s%s",
			n.cfg.JobID, len(view), n.cfg.NPEs, names(view), missing, n.refusedNoteLocked(), n.joinNoteLocked(), n.keyNote())
	}
	table := n.history[n.current]
	if table == nil { // a complete view is evaluated before the loop waits
		table = assignRanks(selectMembers(n.candidatesLocked(), n.cfg.NPEs))
	}
	if table[0].Name != n.self.Name {
		state := ""
		if n.down[table[0].Name] {
			state = ", which gossip reports dead"
		}
		return errs.New("Form", errs.NoPE, errs.NoPE, sentinel,
			"job %q: saw all %d processes and reported the table to its leader, rank 0 (%s at %s%s), which sent no seal%s%s%s",
			n.cfg.JobID, n.cfg.NPEs, table[0].Name, table[0].Addr, state, n.deadNoteLocked(table), n.refusedNoteLocked(), n.keyNote())
	}
	var silent, other []string
	for r, c := range table[1:] {
		rep, ok := n.reports[c.Name]
		d := fmt.Sprintf("rank %d (%s", r+1, c.Name)
		if n.down[c.Name] {
			d += ", dead"
		}
		d += ")"
		switch {
		case !ok:
			silent = append(silent, d)
		case rep.hash != n.current:
			other = append(other, d)
		}
	}
	var parts []string
	if len(silent) > 0 {
		parts = append(parts, "no report from "+strings.Join(silent, ", "))
	}
	if len(other) > 0 {
		parts = append(parts, "another table reported by "+strings.Join(other, ", "))
	}
	return errs.New("Form", errs.NoPE, errs.NoPE, sentinel,
		"job %q: saw all %d processes, but as leader could not seal: %s%s%s",
		n.cfg.JobID, n.cfg.NPEs, strings.Join(parts, "; "), n.refusedNoteLocked(), n.keyNote())
}

// keyNote is what Form's error adds when messages came that this job's key
// could not decrypt: a process of the job started with another secret
// looks, to the others, like one that never started.
func (n *node) keyNote() string {
	k := n.undecryptable.Load()
	if k == 0 {
		return ""
	}
	return fmt.Sprintf("; %d gossip message(s) could not be decrypted (a process started with another SHMEM_JOB_SECRET?)", k)
}

func names(cs []candidate) string {
	s := make([]string, len(cs))
	for i := range cs {
		s[i] = cs[i].Name
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}
