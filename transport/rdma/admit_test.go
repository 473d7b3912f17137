package rdma

import (
	"bytes"
	"io"
	"net"
	"testing"

	"github.com/goshmem/shmem/internal/admit"
)

// A stranger holding hundreds of idle connections open, none of which ever
// authenticates, neither stops the node serving its peers nor keeps more
// than the acceptor's bound of them: a PE of the job still connects, puts
// and quiets, and every stranger's socket beyond the bound is closed.
func TestIdleStrangersDoNotStarveThePeers(t *testing.T) {
	const strangers = 300
	auth := func(c net.Conn, server bool) error {
		tok := []byte("job!")
		if !server {
			_, err := c.Write(tok)
			return err
		}
		got := make([]byte, len(tok))
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if !bytes.Equal(got, tok) {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	w := newWorld(t, 2, 4096, func(c *Config) { c.Authenticate = auth })
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range strangers {
		c, err := net.Dial("tcp", w.nodes[1].Addr())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	p := w.path(0, 1)
	if err := p.Put(64, []byte("served")); err != nil {
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if got := string(w.heaps[1][64:70]); got != "served" {
		t.Fatalf("heap holds %q", got)
	}
	// Every stranger beyond the bound is told admit.Busy (the listener
	// had not written to it) and then reads EOF: count the closed ones.
	closed := 0
	for _, c := range idle[:strangers-w.nodes[1].acc.Pending()] {
		if b, err := io.ReadAll(c); err == nil && admit.IsBusy(b) {
			closed++
		}
	}
	if pending := w.nodes[1].acc.Pending(); pending > 256 || closed+pending < strangers {
		t.Fatalf("%d strangers pending, %d closed, of %d", pending, closed, strangers)
	}
}
