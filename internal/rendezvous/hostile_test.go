package rendezvous

import (
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/secure"
)

func header(kind byte, n uint32) []byte {
	h := []byte{'G', 'S', 'R', 'Z', frameVersion, kind, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[8:], n)
	return h
}

// TestHostileFrames sends authenticated peers' malformed hellos: each gets a
// reject naming the problem, and the server still forms the world.
func TestHostileFrames(t *testing.T) {
	ln := listen(t)
	logs := newLogSink()
	cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: 20 * time.Second}
	srv := cfg
	srv.Listener, srv.Logger = ln, slog.New(logs)
	server := start(context.Background(), srv, record(0))

	for _, tc := range []struct {
		name, bytes, want string
	}{
		{"oversize", string(header(kindHello, rankHdrLen+MaxRecord+1)), "payload length"},
		{"huge length", string(header(kindHello, 0xffffffff)), "payload length"},
		{"undersize", string(header(kindHello, 3)) + "abc", "payload length"},
		{"bad magic", "XXXX\x01\x01\x00\x00\x00\x00\x00\x08" + "\x00\x00\x00\x01\x00\x00\x00\x02", "bad magic"},
		{"bad version", "GSRZ\x07\x01\x00\x00\x00\x00\x00\x08", "version"},
		{"reserved", "GSRZ\x01\x01\x00\x01\x00\x00\x00\x08", "reserved"},
		{"unknown kind", string(header(9, 8)), "unknown frame kind"},
		{"record not hello", string(appendFrame(nil, frame{kind: kindRecord, rank: 1, npes: 2})), "expected a hello"},
		{"rank out of range", string(appendFrame(nil, frame{kind: kindHello, rank: 7, npes: 2})), "out of range"},
		{"rank 0 taken", string(appendFrame(nil, frame{kind: kindHello, rank: 0, npes: 2})), "duplicate rank"},
		{"npes mismatch", string(appendFrame(nil, frame{kind: kindHello, rank: 1, npes: 1 << 31})), "world has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", cfg.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := secure.Handshake(c, secret, secure.ServiceRendezvous, false, time.Now().Add(10*time.Second)); err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write([]byte(tc.bytes)); err != nil {
				t.Fatal(err)
			}
			f, err := readFrame(c)
			if err != nil || f.kind != kindReject || !strings.Contains(f.reason, tc.want) {
				t.Fatalf("reply %+v, %v; want a reject containing %q", f, err, tc.want)
			}
		})
	}

	// Unauthenticated garbage and a silent connection: neither is answered
	// with anything but a close, and neither holds up the exchange.
	garbage, err := net.Dial("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer garbage.Close()
	garbage.Write(append(header(kindHello, 8), make([]byte, 40)...))
	logs.waitFor(t, "not a goshmem endpoint")
	silent, err := net.Dial("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	good := cfg
	good.Rank = 1
	checkTable(t, 1, <-start(context.Background(), good, record(1)), 2)
	checkTable(t, 0, <-server, 2)
	silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	if n, err := silent.Read(b[:]); n != 0 || err == nil || isTimeout(err) {
		t.Fatalf("silent connection: read %d, %v; want it closed by the server", n, err)
	}
}

// TestHostileServer: a client refuses a server that sends a wrong table.
func TestHostileServer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply []byte
		want  string
	}{
		{"out of order", appendFrame(appendFrame(nil, frame{kind: kindRecord, rank: 1, npes: 2}), frame{kind: kindRecord, rank: 0, npes: 2}), "want 0 of 2"},
		{"hello back", appendFrame(nil, frame{kind: kindHello, rank: 0, npes: 2}), "want a record"},
		{"oversize", header(kindRecord, 1<<30), "payload length"},
		{"short table", appendFrame(nil, frame{kind: kindRecord, rank: 0, npes: 2}), "received the table (1 of 2 records)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := listen(t)
			defer ln.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				if secure.Handshake(c, secret, secure.ServiceRendezvous, true, time.Now().Add(10*time.Second)) != nil {
					return
				}
				if _, err := readFrame(c); err != nil {
					return
				}
				c.Write(tc.reply)
			}()
			_, err := Exchange(context.Background(), Config{Addr: ln.Addr().String(), Rank: 1, NPEs: 2, Secret: secret, Timeout: 10 * time.Second}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error containing %q", err, tc.want)
			}
			<-done
		})
	}
}
