package membership

import (
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/hashicorp/memberlist"
)

// maxReportsPerPE bounds the reports a leader keeps, per PE of the world:
// senders are job members (messages are encrypted with the job key), but a
// job started too often must not grow the map without end.
const maxReportsPerPE = 4

// sealOffer is the last seal message received: the sealed table's hash and
// who sent it. step adopts it if this process computed that table.
type sealOffer struct {
	hash [32]byte
	from string
}

// NotifyMsg implements memberlist.Delegate: the direct sealing messages.
// Before sealing it only records them and wakes Form's loop, which does all
// deciding in step. After sealing it answers a table member's report with
// the seal, so a member whose seal message was lost gets it again on its
// next report, however long after this process's Form returned.
func (n *node) NotifyMsg(b []byte) {
	m, err := decodeMsg(b)
	if err != nil {
		n.cfg.Logger.Warn("membership: dropped a direct message", "job", n.cfg.JobID, "node", n.self.Name, "err", err)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || m.From == n.self.Name {
		return
	}
	switch m.Kind {
	case kindLeaving:
		// Only a member of this table, about this table: the map stays
		// bounded by the world's size.
		if _, ok := n.rankOf[m.From]; ok && m.Hash == n.self.Hdr.Hash {
			n.leavers[m.From] = true
		}
		return
	case kindReport:
		if n.sealed {
			n.answerLocked(m)
			return
		}
		old, ok := n.reports[m.From]
		if ok && old.seq >= m.Seq {
			return // reordered: a newer report already arrived
		}
		if !ok && len(n.reports) >= maxReportsPerPE*n.cfg.NPEs {
			return
		}
		n.reports[m.From] = report{seq: m.Seq, hash: m.Hash, addr: m.Addr}
	case kindSeal:
		if n.sealed {
			if m.Hash != n.self.Hdr.Hash {
				n.cfg.Logger.Warn("membership: another table was sealed by a member; keeping this one",
					"job", n.cfg.JobID, "node", n.self.Name, "from", m.From,
					"theirs", fmt.Sprintf("%x", m.Hash[:4]), "ours", fmt.Sprintf("%x", n.self.Hdr.Hash[:4]))
			}
			return
		}
		n.offer = sealOffer{hash: m.Hash, from: m.From}
	}
	n.poke()
}

// answerLocked sends the seal to a table member that still reports. The
// send runs on its own goroutine, since a dial may take up to memberlist's
// TCPTimeout and NotifyMsg must not hold memberlist up; Close waits for it.
func (n *node) answerLocked(m msg) {
	if _, ok := n.rankOf[m.From]; !ok || n.ml == nil {
		return
	}
	s := send{name: m.From, addr: m.Addr, m: n.msgLocked(kindSeal, n.self.Hdr.Hash)}
	ml := n.ml
	n.replies.Add(1) // under mu with closed false: Close waits only after setting closed
	go func() {
		defer n.replies.Done()
		_ = n.deliver(ml, s) // the member reports again if this is lost
	}()
}

// deliver sends one direct message over memberlist's reliable stream and
// logs a failure; the protocol repeats reports, and a lost seal is answered
// again, so a failure needs no other handling.
func (n *node) deliver(ml *memberlist.Memberlist, s send) error {
	err := sendMsg(ml, s)
	if err != nil {
		n.cfg.Logger.Debug("membership: direct message not delivered", "node", n.self.Name, "to", s.name,
			"addr", s.addr, "kind", s.m.Kind, "err", err)
	}
	return err
}

// sendMsg delivers s.m to s.addr.
func sendMsg(ml *memberlist.Memberlist, s send) error {
	host, portStr, err := net.SplitHostPort(s.addr)
	if err != nil {
		return err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("address %q is not an IP", host)
	}
	to := &memberlist.Node{Name: s.name, Addr: ip, Port: uint16(port)}
	return ml.SendReliable(to, s.m.encode(make([]byte, 0, msgMax)))
}

// tellLeavingLocked sends kindLeaving to every table member not known to
// be down, each on its own goroutine (Close waits for them), and returns
// a channel closed once all were delivered or failed. The caller holds mu.
func (n *node) tellLeavingLocked() <-chan struct{} {
	done := make(chan struct{})
	if !n.sealed || n.ml == nil || n.closed {
		close(done)
		return done
	}
	var sends []send
	for r, c := range n.table {
		if c.Name == n.self.Name || n.failed[r] || n.down[c.Name] {
			continue
		}
		sends = append(sends, send{name: c.Name, addr: c.Addr, m: n.msgLocked(kindLeaving, n.self.Hdr.Hash)})
	}
	ml := n.ml
	var all sync.WaitGroup
	for _, s := range sends {
		n.replies.Add(1)
		all.Add(1)
		go func() {
			defer n.replies.Done()
			defer all.Done()
			_ = n.deliver(ml, s) // the gossiped mark remains
		}()
	}
	n.replies.Add(1)
	go func() {
		defer n.replies.Done()
		all.Wait()
		close(done)
	}()
	return done
}
