package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// cutAfterWrite is a listener whose first cut connections close
// themselves right after rank 0's first write to them (its TLS flight or
// its hello), as admit's eviction of a connection rank 0 had answered
// does.
type cutAfterWrite struct {
	net.Listener
	cut atomic.Int32
}

type cutConn struct {
	net.Conn
	once sync.Once
}

func (c *cutConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.once.Do(func() { c.Conn.Close() })
	return n, err
}

func (l *cutAfterWrite) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil || l.cut.Add(-1) < 0 {
		return c, err
	}
	return &cutConn{Conn: c}, nil
}

func tlsConfigs(t *testing.T, cfg *Config) {
	t.Helper()
	cert, pin, err := secure.EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServerTLS, cfg.ClientTLS = secure.ServerConfig(cert), secure.ClientConfig(pin)
}

// TestCutAfterRank0SpokeIsRetried: rank 0, alive, closes a rank's
// connection after it answered the rank's first bytes, as its acceptor does
// to the oldest connection in a flood. That is no refusal of the rank's
// secret (rank 0 says that in so many words): the rank dials again and
// joins, instead of failing at once with ErrTLS.
func TestCutAfterRank0SpokeIsRetried(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			ln := &cutAfterWrite{Listener: listen(t)}
			ln.cut.Store(2)
			cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: 30 * time.Second}
			if useTLS {
				tlsConfigs(t, &cfg)
			}
			srv := cfg
			srv.Listener = ln
			server := start(context.Background(), srv, record(0))
			one := cfg
			one.Rank = 1
			checkTable(t, 1, <-start(context.Background(), one, record(1)), 2)
			checkTable(t, 0, <-server, 2)
		})
	}
}

// TestWrongSecretRefusedAtOnce: a rank with another secret still fails at
// once (not after its timeout of retries) with ErrTLS, and its error says
// that rank 0 refused its job secret.
func TestWrongSecretRefusedAtOnce(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			ln := listen(t)
			cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: time.Minute}
			if useTLS {
				tlsConfigs(t, &cfg)
			}
			srv := cfg
			srv.Listener = ln
			ctx, cancel := context.WithCancel(context.Background())
			server := start(ctx, srv, record(0))
			bad := cfg
			bad.Rank, bad.Secret = 1, []byte("not-the-job-secret-at-all")
			_, err := Exchange(context.Background(), bad, nil)
			if !errors.Is(err, errs.ErrTLS) || errors.Is(err, errs.ErrTimeout) || !errors.Is(err, secure.ErrRefused) ||
				!strings.Contains(err.Error(), "refused this rank's job secret") {
				t.Fatalf("wrong secret: %v\nwant ErrTLS, ErrRefused, no timeout, naming the refused secret", err)
			}
			cancel()
			<-server
		})
	}
}

// TestFloodDoesNotFailStartUp: a stranger opens connections to rank 0's
// rendezvous as fast as it can while a world of 3 forms. Rank 0 sheds the
// oldest, ranks' connections and their liveness probes among them; every
// rank still gets the table, none takes a shed for a refusal of its secret
// or for rank 0's death.
func TestFloodDoesNotFailStartUp(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			ln := listen(t)
			cfg := Config{Addr: ln.Addr().String(), NPEs: 3, Secret: secret, Timeout: 60 * time.Second}
			if useTLS {
				tlsConfigs(t, &cfg)
			}
			srv := cfg
			srv.Listener = ln
			server := start(context.Background(), srv, record(0))
			stop := make(chan struct{})
			var flood sync.WaitGroup
			var conns []net.Conn
			flood.Add(1)
			go func() {
				defer flood.Done()
				for i := 0; i < 20*maxPending(3); i++ {
					select {
					case <-stop:
						return
					default:
					}
					c, err := net.Dial("tcp", cfg.Addr)
					if err != nil {
						continue
					}
					conns = append(conns, c)
				}
			}()
			var ranks []<-chan result
			for r := 1; r < 3; r++ {
				c := cfg
				c.Rank = r
				ranks = append(ranks, start(context.Background(), c, record(r)))
			}
			for i, ch := range ranks {
				checkTable(t, i+1, <-ch, 3)
			}
			checkTable(t, 0, <-server, 3)
			close(stop)
			flood.Wait()
			for _, c := range conns {
				c.Close()
			}
		})
	}
}
