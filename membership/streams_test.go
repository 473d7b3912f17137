package membership

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestGossipStreamsBounded: a stranger opens a thousand TCP connections to
// a seed's gossip port, sending nothing, while a world of 3 forms. The
// seed keeps at most maxStreams of them open (each newer one closes the
// oldest: the stranger reads an end of stream on all but the newest), and
// the world still forms. memberlist alone held every one of them until its
// TCPTimeout, here made longer than the test (a flood drove a PE to 14,866
// descriptors).
func TestGossipStreamsBounded(t *testing.T) {
	const flood = 1000
	log, _ := quietLogger()
	cfgs := job(t, 3, 3, log)
	for i := range cfgs {
		cfgs[i].tcpTimeout = 10 * time.Minute
	}
	type formed struct {
		ws   []*World
		errs []error
	}
	done := make(chan formed, 1)
	go func() {
		ws, es := formAll(cfgs)
		done <- formed{ws, es}
	}()
	seed := cfgs[0].Seeds[0]
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for len(conns) < flood {
		c, err := net.Dial("tcp", seed)
		if err != nil {
			if len(conns) == 0 {
				continue // the seed does not listen yet
			}
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	f := <-done
	defer closeAll(t, f.ws)
	for i, err := range f.errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	sameTable(t, f.ws)
	// All but the newest maxStreams are closed to make room, as the seed
	// accepts the newer ones.
	for i, c := range conns[:flood-maxStreams] {
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // bounds a hang only
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !isReset(err) {
			t.Fatalf("stranger's connection %d of %d: %v, want closed by the seed", i, flood, err)
		}
	}
	for _, w := range f.ws {
		if open := w.n.streams.Open(); open > maxStreams {
			t.Fatalf("%s holds %d inbound streams, bound %d", w.n.self.Addr, open, maxStreams)
		}
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}
