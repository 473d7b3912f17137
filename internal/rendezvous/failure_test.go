package rendezvous

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// target is the PE an *errs.Error names as the one addressed (failed),
// or -2 for another error.
func target(err error) int {
	var e *errs.Error
	if !errors.As(err, &e) {
		return -2
	}
	return e.Target
}

// wantFailed fails the test unless err wraps ErrPEFailed, names PE pe
// and is no authentication failure.
func wantFailed(t *testing.T, who string, err error, pe int) {
	t.Helper()
	if !errors.Is(err, errs.ErrPEFailed) || target(err) != pe || errors.Is(err, errs.ErrTLS) || errors.Is(err, errs.ErrTimeout) ||
		strings.Contains(err.Error(), errs.ErrTLS.Error()) {
		t.Fatalf("%s: %v, want ErrPEFailed naming PE %d", who, err, pe)
	}
}

// registerThenDie plays a rank that registers with rank 0 at addr and
// then dies: it returns once rank 0 logged its arrival, with the
// connection the caller closes as the rank's death.
func registerThenDie(t *testing.T, addr string, rank, npes int, logs *logSink) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := secure.Handshake(c, secret, secure.ServiceRendezvous, false, time.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(appendFrame(nil, frame{kind: kindHello, rank: uint32(rank), npes: uint32(npes)})); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, fmt.Sprintf("rank arrived rank=%d", rank))
	return c
}

// TestRegisteredRankDeath: rank 2 registers and dies before the world
// formed (rank 3 has not arrived). Rank 0 ends at once with ErrPEFailed
// naming PE 2, not at its deadline with "never arrived"; rank 1, waiting,
// gets the same verdict; rank 3, arriving after it, is told it too.
func TestRegisteredRankDeath(t *testing.T) {
	cfg, logs, server, first := rank0And1(t, Config{NPEs: 4, Secret: secret, Timeout: 30 * time.Second, grace: 30 * time.Second})

	registerThenDie(t, cfg.Addr, 2, 4, logs).Close()
	wantFailed(t, "rank 1", (<-first).err, 2)

	three := cfg
	three.Rank = 3
	wantFailed(t, "rank 3, arriving after the failure", (<-start(context.Background(), three, record(3))).err, 2)
	wantFailed(t, "rank 0", (<-server).err, 2)
}

// TestRegisteredRankDeathGraceEnds: after a failure rank 0 waits for
// ranks that never come only for its grace, and its verdict still names
// the failed PE.
func TestRegisteredRankDeathGraceEnds(t *testing.T) {
	ln := listen(t)
	logs := newLogSink()
	srv := Config{Listener: ln, NPEs: 3, Secret: secret, Timeout: 30 * time.Second, Logger: slog.New(logs), grace: time.Millisecond}
	server := start(context.Background(), srv, record(0))
	registerThenDie(t, ln.Addr().String(), 1, 3, logs).Close()
	wantFailed(t, "rank 0", (<-server).err, 1)
}

// fakeRank0 accepts one connection on ln (TLS when server is set) and
// runs until it should die: "handshake", in the middle of the handshake
// (after the client's first bytes); "hello", after the client's hello. It
// dies as a killed process does: its listener first, then the connection.
func fakeRank0(ln net.Listener, server *tls.Config, at string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		raw, err := ln.Accept()
		if err != nil {
			return
		}
		c := raw
		if server != nil {
			c = tls.Server(raw, server)
		}
		switch at {
		case "handshake":
			var b [1]byte
			c.Read(b[:]) // the TLS handshake, or the first byte of the client's hello
		case "hello":
			if secure.Handshake(c, secret, secure.ServiceRendezvous, true, time.Now().Add(10*time.Second)) == nil {
				readFrame(c)
			}
		}
		ln.Close()
		raw.Close()
	}()
	return done
}

// TestRank0Death: rank 0 dies during the secret handshake or while rank 1
// waits for the table. Rank 1's Exchange ends at once with ErrPEFailed
// naming PE 0, not ErrTLS or an error about the table.
func TestRank0Death(t *testing.T) {
	for _, at := range []string{"handshake", "hello"} {
		for _, useTLS := range []bool{false, true} {
			t.Run(at+map[bool]string{true: "/tls", false: "/plain"}[useTLS], func(t *testing.T) {
				ln := listen(t)
				cfg := Config{Addr: ln.Addr().String(), Rank: 1, NPEs: 3, Secret: secret, Timeout: 30 * time.Second}
				var server *tls.Config
				if useTLS {
					cert, pin, err := secure.EphemeralCert()
					if err != nil {
						t.Fatal(err)
					}
					server, cfg.ClientTLS = secure.ServerConfig(cert), secure.ClientConfig(pin)
				}
				done := fakeRank0(ln, server, at)
				_, err := Exchange(context.Background(), cfg, record(1))
				<-done
				wantFailed(t, "rank 1", err, 0)
			})
		}
	}
}

func TestTableLeave(t *testing.T) {
	tab := newTable(3)
	tab.offer(0, 3, nil)
	if tab.leave(1) || !tab.collecting() {
		t.Fatal("a rank that never registered left")
	}
	tab.offer(1, 3, nil)
	if !tab.leave(1) || tab.collecting() || tab.failed != 1 {
		t.Fatalf("registered rank 1 left: failed=%d collecting=%v", tab.failed, tab.collecting())
	}
	if tab.leave(0) || tab.failed != 1 {
		t.Fatal("a second departure replaced the first")
	}
	tab.offer(2, 3, nil)
	if !tab.full() || tab.collecting() {
		t.Fatal("late rank 2 not recorded after the failure")
	}
	formed := newTable(1)
	formed.offer(0, 1, nil)
	if formed.leave(0) {
		t.Fatal("a departure after the world formed counted")
	}
}
