package rendezvous

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// watchedListener signals every connection it accepts, and closes the
// first cut of them itself, as rank 0 turning a rank away at admission.
type watchedListener struct {
	net.Listener
	accepted chan struct{}
	mu       sync.Mutex
	cut      int
}

func watched(t *testing.T, cut int) *watchedListener {
	return &watchedListener{Listener: listen(t), accepted: make(chan struct{}, 4096), cut: cut}
}

func (l *watchedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		cut := l.cut > 0
		if cut {
			l.cut--
		}
		l.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		l.accepted <- struct{}{}
		return c, nil
	}
}

// idle opens n connections to addr that send nothing and returns once the
// server accepted them all.
func idle(t *testing.T, ln *watchedListener, n int) {
	t.Helper()
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	for range n {
		<-ln.accepted
	}
}

// formTwo serves a world of two on ln, runs first (the strangers) once
// rank 0 serves, then rank 1, and checks that both get the table.
func formTwo(t *testing.T, ln *watchedListener, first func()) {
	t.Helper()
	cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: 30 * time.Second}
	srv := cfg
	srv.Listener = ln
	server := start(context.Background(), srv, record(0))
	first()
	one := cfg
	one.Rank = 1
	checkTable(t, 1, <-start(context.Background(), one, record(1)), 2)
	checkTable(t, 0, <-server, 2)
}

// TestIdleFloodDoesNotLockOutRanks: strangers hold more idle connections
// than rank 0 keeps pending. A rank arriving then still gets in (the
// oldest idle connection makes room), rather than being cut and taking
// the cut for rank 0's death.
func TestIdleFloodDoesNotLockOutRanks(t *testing.T) {
	ln := watched(t, 0)
	formTwo(t, ln, func() { idle(t, ln, maxPending(2)+20) })
}

// TestTurnedAwayRankRetries: rank 0, alive, cuts a rank's connection
// before it answered (as it sheds connections under a flood). The rank
// dials again and joins, instead of failing with PE 0 failed or ErrTLS.
func TestTurnedAwayRankRetries(t *testing.T) {
	formTwo(t, watched(t, 1), func() {})
}

// TestVerdictTellsIdleFromRefused: rank 1 never registers. Rank 0's
// verdict counts the idle connections apart from the one that failed
// authentication, and names the rank refused for another world size.
func TestVerdictTellsIdleFromRefused(t *testing.T) {
	ln := watched(t, 0)
	logs := newLogSink()
	cfg := Config{Addr: ln.Addr().String(), NPEs: 3, Secret: secret, Timeout: 30 * time.Second}
	srv := cfg
	srv.Listener, srv.Logger, srv.Timeout = ln, slog.New(logs), 2*time.Second
	server := start(context.Background(), srv, record(0))
	idle(t, ln, 3)
	bad := cfg
	bad.Rank, bad.Secret = 1, []byte("not-the-job-secret-at-all")
	if _, err := Exchange(context.Background(), bad, nil); !errors.Is(err, errs.ErrTLS) {
		t.Fatalf("wrong secret: %v, want ErrTLS", err)
	}
	wrong := cfg
	wrong.Rank, wrong.NPEs = 2, 4
	if _, err := Exchange(context.Background(), wrong, nil); !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("another world size: %v, want ErrBootstrap", err)
	}
	err := (<-server).err
	for _, want := range []string{"ranks 1,2 never arrived", "rank 2 says the world has 4 PEs",
		"1 connection(s) failed authentication", "3 connection(s) sent nothing"} {
		if !errors.Is(err, errs.ErrTimeout) || !strings.Contains(err.Error(), want) {
			t.Errorf("rank 0: %v\nwant ErrTimeout and %q", err, want)
		}
	}
}
