package lane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// peer is the transport actor of one peer: it feeds events to its
// peerState and runs the actions the step returns. Only it writes to the
// peer's connection; a reader goroutine per connection turns what arrives
// into events (and delivers messages, see Lane.deliver).
type peer struct {
	l      *Lane
	rank   int
	st     peerState
	conns  map[int]net.Conn
	cancel func() // ends the dial under way, nil without one
}

// Connections handed to the actor with their events.
type (
	dialedConn struct {
		id int
		c  net.Conn
	}
	acceptedConn struct {
		id int
		c  net.Conn
	}
)

func (p *peer) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case dialedConn:
		p.cancel = nil
		p.conns[m.id] = m.c
		p.run(ctx, evDialed{m.id})
	case evDialFailed:
		p.cancel = nil
		p.run(ctx, m)
	case acceptedConn:
		p.conns[m.id] = m.c
		p.run(ctx, evAccepted{m.id})
	case evRoute, evHeard, evBye, evLost, evTick, evSend, evClose, evFailed, evProbe, evProbeAck:
		p.run(ctx, m)
	case *actor.Stopping:
		if p.cancel != nil {
			p.cancel()
		}
		for id, c := range p.conns {
			c.Close()
			p.l.untrack(id)
		}
	}
}

// run steps the state with ev and runs the actions, and the actions of
// the events they cause (a failed write is a lost link).
func (p *peer) run(ctx actor.Context, ev any) {
	queue := []any{ev}
	for len(queue) > 0 {
		ev, queue = queue[0], queue[1:]
		for _, a := range p.st.step(p.l.now(), ev) {
			if next := p.act(ctx, a); next != nil {
				queue = append(queue, next)
			}
		}
	}
}

// act runs one action and returns the event it caused, if any.
func (p *peer) act(ctx actor.Context, a any) any {
	l := p.l
	switch a := a.(type) {
	case actDial:
		p.dial(ctx.Self())
	case actStop:
		if p.cancel != nil {
			p.cancel()
		}
	case actRead:
		c := p.conns[a.conn]
		l.wg.Add(1)
		go l.read(p.rank, ctx.Self(), a.conn, c)
	case actWrite:
		return p.write(a.conn, a.m.b)
	case actHeartbeat:
		return p.write(a.conn, appendFrame(nil, &frame{kind: kindHeartbeat}))
	case actBye:
		kind := kindBye
		if a.abort {
			kind = kindAbort
		}
		if ev := p.write(a.conn, appendFrame(nil, &frame{kind: kind})); ev != nil {
			return ev
		}
		// The peer reads everything before the end; the link ends when
		// its own end arrives (or at the step's bound).
		if cw, ok := p.conns[a.conn].(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	case actClose:
		if c := p.conns[a.conn]; c != nil {
			c.Close()
			delete(p.conns, a.conn)
			l.untrack(a.conn)
		}
	case actForward:
		l.root.Send(l.peers[a.via], evSend{a.m})
	case actDeclare:
		reason := fmt.Sprintf("lost the control link to PE %d at %s: %s", p.rank, l.addrs[p.rank], a.reason)
		l.log.Warn("control lane: peer lost", "peer", p.rank, "reason", reason)
		if l.cfg.OnLost != nil {
			l.cfg.OnLost(p.rank, reason, a.linked)
		}
	case actGone:
		l.markGone(p.rank)
		if a.left && l.cfg.OnLeft != nil {
			l.cfg.OnLeft(p.rank)
		}
	case actProbe:
		return evProbeSent{round: a.round, asked: l.probe(p.rank, a.round)}
	case actProbeAck:
		l.log.Debug("control lane: probe answered", "peer", p.rank, "asker", a.asker, "age_ms", a.age)
		b := appendFrame(nil, &frame{kind: kindProbeAck, subject: p.rank, round: a.round, age: a.age})
		l.root.Send(l.peers[a.asker], evSend{&out{b: b, name: "ProbeAck", hop: true}})
	case actDrop:
		l.log.Debug("control lane: message dropped", "peer", p.rank, "message", a.m.name, "why", a.why)
	case actDone:
		l.markDone()
	}
	return nil
}

// write sends one frame; a write that fails or does not finish within
// Timing.Silence (a peer that stopped reading) ends the link, with the
// verdict its reader finds (writefail.go).
func (p *peer) write(id int, b []byte) any {
	c := p.conns[id]
	if c == nil {
		return nil
	}
	_ = c.SetWriteDeadline(time.Now().Add(time.Duration(p.l.cfg.Timing.Silence) * time.Millisecond))
	if _, err := c.Write(b); err != nil {
		return evWriteFailed{conn: id, reason: "write: " + err.Error()}
	}
	return nil
}

// dial connects to the peer in the background; the result comes back as
// dialedConn or evDialFailed.
func (p *peer) dial(self *actor.PID) {
	l := p.l
	if p.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(l.life)
	p.cancel = cancel
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer cancel()
		c, err := l.dialPeer(ctx, p.rank)
		if err != nil {
			l.root.Send(self, evDialFailed{reason: err.Error()})
			return
		}
		if id := l.track(c); id != 0 {
			l.root.Send(self, dialedConn{id, c})
		}
	}()
}

// read turns what arrives on connection id from peer into events until
// the connection ends.
func (l *Lane) read(peer int, self *actor.PID, id int, c net.Conn) {
	defer l.wg.Done()
	for {
		f, err := readFrame(c)
		if err != nil {
			reason := err.Error()
			if errors.Is(err, io.EOF) {
				reason = "connection closed by the peer"
			}
			l.root.Send(self, evLost{conn: id, reason: reason})
			return
		}
		switch f.kind {
		case kindHeartbeat:
			l.root.Send(self, evHeard{id})
		case kindBye, kindAbort:
			l.root.Send(self, evBye{conn: id, abort: f.kind == kindAbort})
		case kindMessage:
			l.root.Send(self, evHeard{id})
			l.deliver(peer, f)
		case kindProbe, kindProbeAck:
			l.root.Send(self, evHeard{id})
			l.probeFrame(peer, f)
		default:
			l.root.Send(self, evLost{conn: id, reason: "unexpected hello"})
			return
		}
	}
}
