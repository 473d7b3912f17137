package main

import (
	"net"
	"testing"
	"time"
)

// TestAcceptTokenDropsStrangers: connections that send anything but the
// token, or hang up, are closed; the one that sends it is returned, its
// bytes after the token intact.
func TestAcceptTokenDropsStrangers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	token := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	dial := func(send []byte) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(send); err != nil {
			t.Fatal(err)
		}
		return c
	}
	wrong := dial([]byte("GET / HTTP/1.0\r\n\r\n"))
	defer wrong.Close()
	short := dial([]byte{1, 2, 3})
	short.Close()
	right := dial(append(token[:], 'x'))
	defer right.Close()

	c, err := acceptToken(ln, token, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil || b[0] != 'x' {
		t.Fatalf("read after the token = %q, %v; want x", b[:], err)
	}
	// The stranger's connection was closed by the listener's side.
	_ = wrong.SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := wrong.Read(b[:]); err == nil {
		t.Fatalf("the stranger read %d bytes, want its connection closed", n)
	}
}

// TestAcceptTokenEnds: with no connection at all, it fails at its deadline.
func TestAcceptTokenEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := acceptToken(ln, [8]byte{}, time.Now()); err == nil {
		t.Fatal("acceptToken without a connection succeeded")
	}
}
