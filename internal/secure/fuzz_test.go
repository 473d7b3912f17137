package secure

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

func FuzzParseHello(f *testing.F) {
	h := hello{role: roleClient, service: ServiceData}
	b := h.marshal()
	f.Add(b[:])
	f.Add([]byte("GSHA"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseHello(data)
		if err != nil {
			return
		}
		// Whatever parses must re-encode to the same bytes.
		if again := got.marshal(); string(again[:]) != string(data) {
			t.Fatalf("round trip %x -> %x", data, again)
		}
	})
}

// FuzzHandshakeServer feeds arbitrary client bytes to the server side: it
// must refuse them (no forged proof can pass) without panicking or hanging.
func FuzzHandshakeServer(f *testing.F) {
	h := hello{role: roleClient, service: ServiceData}
	b := h.marshal()
	f.Add(append(b[:], make([]byte, proofLen)...))
	f.Add([]byte("\x16\x03\x01\x00\x05hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, peer := net.Pipe()
		// net.Pipe is unbuffered: write and drain concurrently, and close
		// the peer after writing so short inputs end in EOF, not a timeout.
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			peer.Write(data)
			peer.Close()
		}()
		go io.Copy(io.Discard, peer)
		err := Handshake(a, testSecret, ServiceData, true, time.Now().Add(time.Second))
		a.Close()
		<-wrote
		if !errors.Is(err, errs.ErrTLS) {
			t.Fatalf("server accepted fuzz input or failed oddly: %v", err)
		}
	})
}
