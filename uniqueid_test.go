package shmem_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
)

// TestGetUniqueIDChecksTheAddress: an address rank 0 cannot listen on, or
// one the other PEs cannot dial, fails GetUniqueID on the spot (it used to
// fail rank 0's Init while the other ranks waited out their timeout).
func TestGetUniqueIDChecksTheAddress(t *testing.T) {
	for _, c := range []struct {
		addr     string
		sentinel error
		says     string
	}{
		{"192.0.2.99:4000", shmem.ErrBootstrap, "could not listen on 192.0.2.99:4000"}, // TEST-NET-1: not this host's
		{"0.0.0.0:4000", shmem.ErrInvalidArgument, "names none the other PEs can dial"},
		{"[::]:4000", shmem.ErrInvalidArgument, "names none the other PEs can dial"},
	} {
		t.Setenv("SHMEM_UID_SESSION_ID", c.addr)
		_, err := shmem.GetUniqueID()
		if !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "SHMEM_UID_SESSION_ID") {
			t.Errorf("SHMEM_UID_SESSION_ID=%s: %v, want %v saying %q and naming the variable", c.addr, err, c.sentinel, c.says)
		}
	}
	// A loopback address with a free port makes an ID as before.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := ln.Addr().String()
	ln.Close()
	t.Setenv("SHMEM_UID_SESSION_ID", free)
	if _, err := shmem.GetUniqueID(); err != nil {
		t.Fatalf("SHMEM_UID_SESSION_ID=%s: %v", free, err)
	}
}
