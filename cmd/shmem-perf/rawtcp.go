package main

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/goshmem/shmem"
)

// rawTCP is the reference the network targets are measured against: an
// 8-byte request and an 8-byte answer over a plain Go TCP connection
// between PE 0 and PE 1 (blocking net.Conn reads, no TLS, no framing), timed
// like the put and get loops. PE 1 listens on every address and tells PE 0
// its port; PE 0 dials -rawhost.
func (r *runner) rawTCP() error {
	p := r.p
	port, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	var ln net.Listener
	if r.me == 1 {
		if ln, err = net.Listen("tcp", ":0"); err != nil {
			return err
		}
		defer ln.Close()
		if err := shmem.P(p, port, int64(ln.Addr().(*net.TCPAddr).Port), 0); err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	n := p2pSkip + p2pIters
	switch r.me {
	case 0:
		addr := net.JoinHostPort(r.c.rawHost, strconv.FormatInt(port.Local(p)[0], 10))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("dialling PE 1 at %s: %w", addr, err)
		}
		var b [8]byte
		lat, _, err := r.timeLoop(p2pSkip, p2pIters, func(int) error {
			if _, err := c.Write(b[:]); err != nil {
				return err
			}
			_, err := io.ReadFull(c, b[:])
			return err
		}, nil)
		c.Close()
		if err != nil {
			return err
		}
		r.row("tcp_rtt", 8, p2pIters, lat, 8/lat, 0)
	case 1:
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		var b [8]byte
		for i := 0; i < n && err == nil; i++ {
			if _, err = io.ReadFull(c, b[:]); err == nil {
				_, err = c.Write(b[:])
			}
		}
		c.Close()
		if err != nil {
			return fmt.Errorf("answering PE 0: %w", err)
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	return shmem.Free(p, port)
}
