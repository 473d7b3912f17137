package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/transport/rdma"
)

// rawTCP measures the references the network targets are compared with: an
// 8-byte request and an 8-byte answer over a plain Go TCP connection
// between PE 0 and PE 1 (no TLS, no framing), timed like the put and get
// loops, twice:
//
//   - tcp_rtt: blocking net.Conn reads, which park in the runtime's poller
//     at once (a thread wake-up per message);
//   - tcp_rtt_poll: the same connection with reads that poll the socket
//     first exactly as goshmem's TCP lanes do (rdma.PollingConn, with
//     SHMEM_BUSY_POLL's value or goshmem's default). This is the reference
//     in the same mode as goshmem's own round trips; with SHMEM_BUSY_POLL=0
//     it parks too and equals tcp_rtt.
//
// PE 1 listens on -rawhost and tells PE 0 its port; PE 0 dials it.
func (r *runner) rawTCP() error {
	poll, err := busyPoll()
	if err != nil {
		return err
	}
	if err := r.roundTrips("tcp_rtt", func(c net.Conn) net.Conn { return c }); err != nil {
		return err
	}
	return r.roundTrips("tcp_rtt_poll", func(c net.Conn) net.Conn { return rdma.PollingConn(c, poll) })
}

// busyPoll is the poll goshmem's lanes use in this process: SHMEM_BUSY_POLL,
// which shmem.Init has already validated, or the default.
func busyPoll() (time.Duration, error) {
	v := os.Getenv("SHMEM_BUSY_POLL")
	if v == "" {
		return rdma.DefaultBusyPoll, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("SHMEM_BUSY_POLL=%q: %w", v, err)
	}
	return d, nil
}

// roundTrips times one connection's round trips (PE 0) and answers them
// (PE 1); wrap gives both ends their read mode.
func (r *runner) roundTrips(name string, wrap func(net.Conn) net.Conn) error {
	skip, iters := r.p2pCounts(8)
	return r.rawPair(func(raw net.Conn) error {
		c := wrap(raw)
		var b [8]byte
		if r.me == 0 {
			lat, _, err := r.timeLoop(skip, iters, func(int) error {
				if _, err := c.Write(b[:]); err != nil {
					return err
				}
				_, err := io.ReadFull(c, b[:])
				return err
			}, nil)
			if err != nil {
				return err
			}
			r.row(name, 8, iters, lat, 8/lat, 0)
			return nil
		}
		var err error
		for i := 0; i < skip+iters && err == nil; i++ {
			if _, err = io.ReadFull(c, b[:]); err == nil {
				_, err = c.Write(b[:])
			}
		}
		if err != nil {
			return fmt.Errorf("answering PE 0: %w", err)
		}
		return nil
	})
}

// rawPair connects PE 0 and PE 1 with a plain TCP connection, outside
// goshmem: PE 1 listens on -rawhost and tells PE 0 its port and a random
// token through the heap; PE 0 dials and sends the token first, so a
// stranger who connects first is dropped, not measured or answered
// (acceptToken). Each of the two runs side with its end, which rawPair
// closes; other PEs only take part in the barriers.
func (r *runner) rawPair(side func(c net.Conn) error) error {
	p := r.p
	meet, err := shmem.Calloc[int64](p, 2) // the port and the token
	if err != nil {
		return err
	}
	var ln net.Listener
	var token [8]byte
	if r.me == 1 {
		if ln, err = net.Listen("tcp", net.JoinHostPort(r.c.rawHost, "0")); err != nil {
			return fmt.Errorf("listening on -rawhost %s: %w", r.c.rawHost, err)
		}
		defer ln.Close()
		_, _ = rand.Read(token[:])
		tok := int64(binary.LittleEndian.Uint64(token[:]))
		if err := shmem.Put(p, meet, []int64{int64(ln.Addr().(*net.TCPAddr).Port), tok}, 0); err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	var c net.Conn
	switch r.me {
	case 0:
		addr := net.JoinHostPort(r.c.rawHost, strconv.FormatInt(meet.Local(p)[0], 10))
		if c, err = net.Dial("tcp", addr); err != nil {
			return fmt.Errorf("dialling PE 1 at %s: %w", addr, err)
		}
		binary.LittleEndian.PutUint64(token[:], uint64(meet.Local(p)[1]))
		if _, err = c.Write(token[:]); err != nil {
			c.Close()
			return fmt.Errorf("sending PE 1 its token: %w", err)
		}
	case 1:
		if c, err = acceptToken(ln, token, time.Now().Add(rawAcceptWait)); err != nil {
			return err
		}
	}
	if c != nil {
		err = side(c)
		c.Close()
		if err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	return shmem.Free(p, meet)
}

// rawAcceptWait bounds PE 1's wait for PE 0's connection, and rawTokenWait
// a connection's wait for its token: PE 0 dials right after the barrier,
// so only a stranger or a dead PE 0 takes long.
const (
	rawAcceptWait = 30 * time.Second
	rawTokenWait  = 5 * time.Second
)

// acceptToken accepts connections on ln until one sends token as its
// first bytes, closing the others, and returns it; it fails at deadline.
func acceptToken(ln net.Listener, token [8]byte, deadline time.Time) (net.Conn, error) {
	if tl, ok := ln.(*net.TCPListener); ok {
		_ = tl.SetDeadline(deadline)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return nil, fmt.Errorf("waiting for PE 0's connection: %w", err)
		}
		var got [8]byte
		until := time.Now().Add(rawTokenWait)
		if deadline.Before(until) {
			until = deadline
		}
		_ = c.SetReadDeadline(until)
		if _, err := io.ReadFull(c, got[:]); err == nil && got == token {
			_ = c.SetReadDeadline(time.Time{})
			return c, nil
		}
		c.Close()
	}
}
