package rdma

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/secure"
	"github.com/goshmem/shmem/transport"
)

// evictionLog is a slog handler that closes evicted at the acceptor's
// first line saying it closed the oldest pending connection.
type evictionLog struct {
	once    *sync.Once
	evicted chan struct{}
}

func (h evictionLog) Enabled(context.Context, slog.Level) bool { return true }
func (h evictionLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h evictionLog) WithGroup(string) slog.Handler            { return h }
func (h evictionLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "closed the oldest") {
		h.once.Do(func() { close(h.evicted) })
	}
	return nil
}

// TestFloodDoesNotCutALegitimateLane: PE 0's first data connection to PE
// 1 is in its job-secret handshake (held there by the test) when 300
// strangers connect to PE 1's data listener and stay silent, more than it
// keeps waiting to authenticate: it sheds the oldest, PE 0's. PE 0 dials
// again, and its put lands. Without TLS the shed connection is told
// admit.Busy (nothing was written to it yet); under TLS, whose server
// answered the ClientHello, it is only closed. (Its put used to fail
// with ErrTLS after five seconds: a connection cut in its handshake was
// taken for a refusal.)
func TestFloodDoesNotCutALegitimateLane(t *testing.T) {
	srv, cli := selfSigned(t)
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"tcp", false}, {"tls", true}} {
		t.Run(tc.name, func(t *testing.T) {
			secret := bytes.Repeat([]byte{7}, secure.MinSecretLen)
			held, release := make(chan struct{}), make(chan struct{})
			var first sync.Once
			evicted := make(chan struct{})
			w := newWorld(t, 2, 4096, func(c *Config) {
				if tc.tls {
					c.ServerTLS, c.ClientTLS = srv, cli
				}
				if c.Rank == 1 {
					c.Logger = slog.New(evictionLog{once: new(sync.Once), evicted: evicted})
				}
				c.Authenticate = func(conn net.Conn, server bool) error {
					deadline := time.Now().Add(time.Minute)
					if !server {
						return secure.Handshake(conn, secret, secure.ServiceData, false, deadline)
					}
					if secure.VerifiedHook(conn) == nil {
						t.Error("an accepted connection carries no admission hook")
					}
					// The first call is PE 0's connection (without TLS
					// the strangers' reach here too, after it).
					first.Do(func() {
						close(held)
						<-release
					})
					return secure.ServerHandshake(conn, secret, secure.ServiceData, deadline, secure.VerifiedHook(conn))
				}
			})
			put := make(chan error, 1)
			p := w.path(0, 1)
			go func() {
				err := p.Put(64, []byte("served"))
				if err == nil {
					err = w.nodes[0].Engine().Quiet()
				}
				put <- err
			}()
			<-held
			var strangers []net.Conn
			defer func() {
				for _, c := range strangers {
					c.Close()
				}
			}()
			for range 300 {
				c, err := net.Dial("tcp", w.nodes[1].Addr())
				if err != nil {
					t.Fatal(err)
				}
				strangers = append(strangers, c)
			}
			<-evicted // the oldest pending connection, PE 0's, was shed
			close(release)
			if err := <-put; err != nil {
				t.Fatalf("put after the flood: %v", err)
			}
			if got := string(w.heaps[1][64:70]); got != "served" {
				t.Fatalf("heap holds %q", got)
			}
			if st := w.nodes[0].Engine().(transport.ConnCounter).ConnStats(); st.Redials == 0 {
				t.Errorf("no redial: the shed connection was not the one that served")
			}
		})
	}
}
