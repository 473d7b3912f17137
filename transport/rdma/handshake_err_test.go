package rdma

import (
	"net"
	"testing"
)

// TestListenerGone: the probe that tells a peer that died during a
// handshake (its port refuses) from one that refused it (its port
// accepts) answers both ways.
func TestListenerGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if listenerGone(addr) {
		t.Errorf("a live listener at %s counted as gone", addr)
	}
	ln.Close()
	if !listenerGone(addr) {
		t.Errorf("a closed listener at %s counted as alive", addr)
	}
}
