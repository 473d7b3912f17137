package rdma

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// blackHole accepts one connection, reports when a full frame header has
// arrived, and then never answers.
func blackHole(t *testing.T) (addr string, gotFrame <-chan net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan net.Conn, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		var hb [headerSize]byte
		if _, err := io.ReadFull(c, hb[:]); err == nil {
			ch <- c
		} else {
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		select {
		case c := <-ch:
			c.Close()
		default:
		}
	})
	return ln.Addr().String(), ch
}

func wantPEFailed(t *testing.T, err error, peer int) {
	t.Helper()
	var e *errs.Error
	if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != peer {
		t.Fatalf("got %v, want ErrPEFailed naming PE %d", err, peer)
	}
}

func TestPeerFailedUnblocksOps(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	addr, got := blackHole(t)
	p := w.nodes[0].Path(2, addr)
	res := make(chan error, 1)
	go func() { res <- p.Get(make([]byte, 8), 0) }()
	c := <-got // the request is on the wire and nobody will answer
	defer c.Close()
	w.nodes[0].PeerFailed(2)
	wantPEFailed(t, <-res, 2)
	wantPEFailed(t, p.Put(0, []byte{1}), 2)
	wantPEFailed(t, w.nodes[0].Path(2, addr).Put(0, []byte{1}), 2)
}

func TestConnectionLossFailsPendingOps(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	addr, got := blackHole(t)
	res := pendingFetchAdd(w.nodes[0].Path(1, addr))
	(<-got).Close()
	wantPEFailed(t, <-res, 1)
}

// pendingFetchAdd starts a fetch-add on p and returns where its error
// will come.
func pendingFetchAdd(p transport.Path) <-chan error {
	res := make(chan error, 1)
	go func() {
		_, err := p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0)
		res <- err
	}()
	return res
}

func TestOpTimeout(t *testing.T) {
	w := newWorld(t, 2, 4096, func(c *Config) { c.OpTimeout = 300 * time.Millisecond })
	addr, got := blackHole(t)
	p := w.nodes[0].Path(1, addr)
	err := p.Get(make([]byte, 8), 0)
	if !errors.Is(err, errs.ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	(<-got).Close()
}

func TestNoDialNoPanic(t *testing.T) {
	w := newWorld(t, 2, 4096, nil)
	p := w.nodes[0].Path(1, "127.0.0.1:1")
	wantPEFailed(t, p.Put(0, []byte{1}), 1)
	bad := w.nodes[0].Path(7, "127.0.0.1:1")
	if err := bad.Put(0, []byte{1}); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("path to PE 7 of 2: %v", err)
	}
}

func selfSigned(t *testing.T) (server, client *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "goshmem-test"},
		DNSNames: []string{"goshmem-test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS13}
	client = &tls.Config{RootCAs: pool, ServerName: "goshmem-test", MinVersion: tls.VersionTLS13}
	return server, client
}

// TestTLS: the handshake checks the certificate, and a half-configured
// node is refused. (Data over TLS is the conformance suite's "tls" run.)
func TestTLS(t *testing.T) {
	srv, cli := selfSigned(t)
	w := newWorld(t, 2, 64, func(c *Config) { c.ServerTLS, c.ClientTLS = srv, cli })
	if err := w.path(0, 1).Put(0, []byte{1}); err != nil {
		t.Fatalf("trusted certificate: %v", err)
	}
	// A client that does not trust the certificate is refused.
	_, other := selfSigned(t)
	x := newWorld(t, 2, 64, func(c *Config) { c.ServerTLS, c.ClientTLS = srv, other })
	if err := x.nodes[0].Path(1, w.nodes[1].Addr()).Put(0, []byte{1}); !errors.Is(err, errs.ErrTLS) {
		t.Fatalf("untrusted certificate: %v, want ErrTLS", err)
	}
	if (&Config{Rank: 0, NPEs: 1, ServerTLS: srv}).validate() == nil {
		t.Fatal("half a TLS configuration accepted")
	}
}

func TestAuthenticateRefusal(t *testing.T) {
	// As secure.Handshake refuses: an *errs.Error wrapping ErrTLS.
	refuse := errs.New("Handshake", errs.NoPE, errs.NoPE, errs.ErrTLS, "server does not know the job secret")
	w := newWorld(t, 2, 64, func(c *Config) {
		c.Authenticate = func(conn net.Conn, server bool) error {
			if !server && c.Rank == 0 {
				return refuse
			}
			return nil
		}
	})
	err := w.path(0, 1).Put(0, []byte{1})
	if !errors.Is(err, errs.ErrTLS) || strings.Count(err.Error(), errs.ErrTLS.Error()) != 1 {
		t.Fatalf("client refusal: %v, want ErrTLS, named once", err)
	}
	// The server refusing closes the connection before reading a frame.
	v := newWorld(t, 2, 64, func(c *Config) {
		c.Authenticate = func(conn net.Conn, server bool) error {
			if server {
				return refuse
			}
			return nil
		}
	})
	p := v.path(0, 1)
	_, err = p.Atomic(transport.AtomicFetch, 8, 0, 0, 0)
	wantPEFailed(t, err, 1)
	if v.heaps[1][0] != 0 {
		t.Fatal("refused connection touched the heap")
	}
}

// TestPeerFailedEndsAHandshake: a peer accepts the connection and then
// says nothing (its host vanished mid-connect). PeerFailed must end the
// operation stuck in the TLS handshake at once, as ErrPEFailed naming the
// peer, not at OpTimeout as a TLS error.
func TestPeerFailedEndsAHandshake(t *testing.T) {
	_, cli := selfSigned(t)
	srv, _ := selfSigned(t)
	w := newWorld(t, 2, 4096, func(c *Config) { c.ServerTLS, c.ClientTLS = srv, cli })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	p := w.nodes[0].Path(1, ln.Addr().String())
	res := make(chan error, 1)
	go func() { res <- p.Put(0, []byte{1}) }()
	c := <-accepted // connected; the client now waits for a server hello
	if c == nil {
		t.Fatal("accept failed")
	}
	defer c.Close()
	w.nodes[0].PeerFailed(1)
	wantPEFailed(t, <-res, 1)
}

// levelLog records the level of every log record.
type levelLog struct {
	mu     sync.Mutex
	levels []slog.Level
}

func (l *levelLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *levelLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.levels = append(l.levels, r.Level)
	l.mu.Unlock()
	return nil
}
func (l *levelLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levelLog) WithGroup(string) slog.Handler      { return l }

func (l *levelLog) warnings() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, v := range l.levels {
		if v >= slog.LevelWarn {
			n++
		}
	}
	return n
}

// TestLeavingLogsNoFailure: once its PE is finalizing (Leaving), a node
// whose connection a peer ends does not log that as a failure: the peers
// that finalize first tear down. Before Leaving it does.
func TestLeavingLogsNoFailure(t *testing.T) {
	for _, leaving := range []bool{false, true} {
		t.Run(fmt.Sprintf("leaving=%v", leaving), func(t *testing.T) {
			log := &levelLog{}
			w := newWorld(t, 2, 4096, func(c *Config) {
				if c.Rank == 0 {
					c.Logger = slog.New(log)
				}
			})
			addr, got := blackHole(t)
			res := pendingFetchAdd(w.nodes[0].Path(1, addr))
			if leaving {
				w.nodes[0].Leaving()
			}
			(<-got).Close()
			wantPEFailed(t, <-res, 1)
			if n := log.warnings(); (n > 0) != !leaving {
				t.Errorf("%d warnings logged, leaving %v", n, leaving)
			}
		})
	}
}
