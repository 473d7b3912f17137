package rendezvous

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runWorld(t *testing.T, npes int, useTLS bool) {
	t.Helper()
	ln := listen(t)
	base := Config{Addr: ln.Addr().String(), NPEs: npes, Secret: secret, Timeout: 20 * time.Second}
	if useTLS {
		cert, pin, err := secure.EphemeralCert()
		if err != nil {
			t.Fatal(err)
		}
		base.ServerTLS = secure.ServerConfig(cert)
		base.ClientTLS = secure.ClientConfig(pin)
	}
	chans := make([]<-chan result, npes)
	for r := 0; r < npes; r++ {
		cfg := base
		cfg.Rank = r
		if r == 0 {
			cfg.Listener = ln
		}
		chans[r] = start(context.Background(), cfg, record(r))
	}
	for r, ch := range chans {
		checkTable(t, r, <-ch, npes)
	}
}

func TestWorlds(t *testing.T) {
	for _, npes := range []int{1, 2, 8, 32} {
		for _, useTLS := range []bool{false, true} {
			t.Run(fmt.Sprintf("npes=%d/tls=%v", npes, useTLS), func(t *testing.T) { runWorld(t, npes, useTLS) })
		}
	}
}

func TestRecordsAreCopies(t *testing.T) {
	rec := []byte("mine")
	recs, err := Exchange(context.Background(), Config{NPEs: 1, Secret: secret}, rec)
	if err != nil {
		t.Fatal(err)
	}
	rec[0] = 'X'
	if string(recs[0]) != "mine" {
		t.Fatalf("record aliases the caller's slice: %q", recs[0])
	}
}

func TestMaxRecordAndEmptyRecord(t *testing.T) {
	ln := listen(t)
	big := make([]byte, MaxRecord)
	for i := range big {
		big[i] = byte(i * 7)
	}
	cfg := Config{Addr: ln.Addr().String(), NPEs: 3, Secret: secret, Timeout: 20 * time.Second}
	c0, c1, c2 := cfg, cfg, cfg
	c0.Listener = ln
	c1.Rank, c2.Rank = 1, 2
	chs := []<-chan result{start(context.Background(), c0, nil), start(context.Background(), c1, big), start(context.Background(), c2, []byte{1})}
	for r, ch := range chs {
		res := <-ch
		if res.err != nil {
			t.Fatalf("rank %d: %v", r, res.err)
		}
		if len(res.recs[0]) != 0 || string(res.recs[1]) != string(big) || string(res.recs[2]) != "\x01" {
			t.Fatalf("rank %d: wrong table (sizes %d %d %d)", r, len(res.recs[0]), len(res.recs[1]), len(res.recs[2]))
		}
	}
}

func TestClientsBeforeServer(t *testing.T) {
	// Reserve a port, free it, and let the clients dial it before rank 0
	// listens: they must retry until it does.
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close()
	cfg := Config{Addr: addr, NPEs: 4, Secret: secret, Timeout: 20 * time.Second}
	var chs []<-chan result
	for r := 1; r < 4; r++ {
		c := cfg
		c.Rank = r
		chs = append(chs, start(context.Background(), c, record(r)))
	}
	chs = append([]<-chan result{start(context.Background(), cfg, record(0))}, chs...)
	for r, ch := range chs {
		checkTable(t, r, <-ch, 4)
	}
}

func TestWrongSecretImpostorRefused(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			ln := listen(t)
			logs := newLogSink()
			cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: 20 * time.Second}
			if useTLS {
				cert, pin, _ := secure.EphemeralCert()
				cfg.ServerTLS, cfg.ClientTLS = secure.ServerConfig(cert), secure.ClientConfig(pin)
			}
			srv := cfg
			srv.Listener, srv.Logger = ln, slog.New(logs)
			server := start(context.Background(), srv, record(0))

			imp := cfg
			imp.Rank, imp.Secret = 1, []byte("not-the-job-secret-at-all")
			if _, err := Exchange(context.Background(), imp, []byte("evil")); !errors.Is(err, errs.ErrTLS) {
				t.Fatalf("impostor: %v, want ErrTLS", err)
			}
			logs.waitFor(t, "does not know the job secret")

			good := cfg
			good.Rank = 1
			checkTable(t, 1, <-start(context.Background(), good, record(1)), 2)
			checkTable(t, 0, <-server, 2)
		})
	}
}

func TestDuplicateRankRefused(t *testing.T) {
	cfg, _, server, first := rank0And1(t, Config{NPEs: 3, Secret: secret, Timeout: 20 * time.Second})
	one := cfg
	one.Rank = 1
	_, err := Exchange(context.Background(), one, []byte("second rank 1"))
	if !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), "duplicate rank") {
		t.Fatalf("duplicate: %v, want ErrBootstrap naming the duplicate", err)
	}
	two := cfg
	two.Rank = 2
	checkTable(t, 2, <-start(context.Background(), two, record(2)), 3)
	checkTable(t, 1, <-first, 3)
	checkTable(t, 0, <-server, 3)
}

func TestNPEsMismatchRefused(t *testing.T) {
	ln := listen(t)
	cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: 20 * time.Second}
	srv := cfg
	srv.Listener = ln
	server := start(context.Background(), srv, record(0))
	bad := cfg
	bad.Rank, bad.NPEs = 1, 3
	if _, err := Exchange(context.Background(), bad, nil); !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), "world has 3 PEs") {
		t.Fatalf("npes mismatch: %v", err)
	}
	good := cfg
	good.Rank = 1
	checkTable(t, 1, <-start(context.Background(), good, record(1)), 2)
	checkTable(t, 0, <-server, 2)
}

func TestMissingRanksNamed(t *testing.T) {
	ln := listen(t)
	cfg := Config{Addr: ln.Addr().String(), NPEs: 6, Secret: secret, Timeout: 20 * time.Second}
	srv := cfg
	srv.Listener, srv.Timeout = ln, 300*time.Millisecond
	logs := newLogSink()
	srv.Logger = slog.New(logs)
	server := start(context.Background(), srv, record(0))
	var clients []<-chan result
	for _, r := range []int{1, 3, 4} {
		c := cfg
		c.Rank = r
		clients = append(clients, start(context.Background(), c, record(r)))
	}
	res := <-server
	if !errors.Is(res.err, errs.ErrTimeout) || !errors.Is(res.err, errs.ErrBootstrap) {
		t.Fatalf("server: %v, want ErrTimeout and ErrBootstrap", res.err)
	}
	if !strings.Contains(res.err.Error(), "ranks 2,5 never arrived") {
		t.Fatalf("server error does not name ranks 2,5: %v", res.err)
	}
	// Ranks that arrived before the deadline (rank 0 logged them) are
	// told why the world failed, naming the missing ranks rather than
	// timing out on their own; a rank still dialing when the listener
	// closed fails on its own.
	logs.mu.Lock()
	lines := slices.Clone(logs.lines)
	logs.mu.Unlock()
	for i, ch := range clients {
		rank := []int{1, 3, 4}[i]
		r := <-ch
		if !errors.Is(r.err, errs.ErrBootstrap) {
			t.Fatalf("client %d: %v, want ErrBootstrap", rank, r.err)
		}
		arrived := slices.ContainsFunc(lines, func(l string) bool {
			return strings.Contains(l, "rank arrived") && strings.Contains(l, fmt.Sprintf("rank=%d ", rank))
		})
		if arrived && !strings.Contains(r.err.Error(), "ranks 2,5 never arrived") {
			t.Errorf("rank %d registered but its error does not name ranks 2,5: %v", rank, r.err)
		}
	}
}

func TestClientTimeoutNamesServer(t *testing.T) {
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close() // nobody listens here
	_, err := Exchange(context.Background(), Config{Addr: addr, Rank: 1, NPEs: 2, Secret: secret, Timeout: 200 * time.Millisecond}, nil)
	if !errors.Is(err, errs.ErrTimeout) || !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("%v, want ErrTimeout naming %s", err, addr)
	}
}

// awaitCancelled checks that Exchange returned, after its ctx was
// cancelled, an error wrapping context.Canceled and ErrBootstrap that says
// so, rather than describing a wait that ran its whole timeout ("did not
// answer within 1m0s" after a cancel a few milliseconds in).
func awaitCancelled(t *testing.T, name string, ch <-chan result) {
	t.Helper()
	select {
	case r := <-ch:
		if !errors.Is(r.err, context.Canceled) || !errors.Is(r.err, errs.ErrBootstrap) {
			t.Fatalf("%s: %v, want context.Canceled and ErrBootstrap", name, r.err)
		}
		if strings.Contains(r.err.Error(), "within") {
			t.Fatalf("%s: %v: a cancelled start-up described as a timeout", name, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: Exchange did not return after cancel", name)
	}
}

func TestCancelAbortsPromptly(t *testing.T) {
	// A client still dialing nobody.
	ctx, cancel := context.WithCancel(context.Background())
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close()
	dialing := start(ctx, Config{Addr: addr, Rank: 1, NPEs: 2, Secret: secret}, nil)
	cancel()
	awaitCancelled(t, "dialing client", dialing)

	// A server with one client registered and waiting for the table:
	// cancelling the server ends it, and tells the client why.
	ln = listen(t)
	logs := newLogSink()
	sctx, scancel := context.WithCancel(context.Background())
	server := start(sctx, Config{Listener: ln, NPEs: 3, Secret: secret, Logger: slog.New(logs)}, nil)
	client := start(context.Background(), Config{Addr: ln.Addr().String(), Rank: 2, NPEs: 3, Secret: secret}, nil)
	logs.waitFor(t, "rank arrived rank=2")
	scancel()
	awaitCancelled(t, "server", server)
	if r := <-client; !errors.Is(r.err, errs.ErrBootstrap) || !strings.Contains(r.err.Error(), "rank 0 gave up") {
		t.Fatalf("client of a cancelled server: %v, want ErrBootstrap saying rank 0 gave up", r.err)
	}

	// A registered client cancelled while it waits: it ends at once; to
	// rank 0 it is a rank that left (TestRegisteredRankDeath).
	ln = listen(t)
	logs = newLogSink()
	server = start(context.Background(), Config{Listener: ln, NPEs: 3, Secret: secret, Logger: slog.New(logs)}, nil)
	cctx, ccancel := context.WithCancel(context.Background())
	client = start(cctx, Config{Addr: ln.Addr().String(), Rank: 2, NPEs: 3, Secret: secret}, nil)
	logs.waitFor(t, "rank arrived rank=2")
	ccancel()
	awaitCancelled(t, "waiting client", client)
	if r := <-server; !errors.Is(r.err, errs.ErrPEFailed) || target(r.err) != 2 {
		t.Fatalf("server after its client was cancelled: %v, want ErrPEFailed naming PE 2", r.err)
	}
}

func TestInvalidConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg Config
		rec []byte
	}{
		"npes 0":         {Config{Addr: "127.0.0.1:1", NPEs: 0, Secret: secret}, nil},
		"npes too big":   {Config{Addr: "127.0.0.1:1", NPEs: MaxNPEs + 1, Secret: secret}, nil},
		"rank negative":  {Config{Addr: "127.0.0.1:1", Rank: -1, NPEs: 2, Secret: secret}, nil},
		"rank too big":   {Config{Addr: "127.0.0.1:1", Rank: 2, NPEs: 2, Secret: secret}, nil},
		"record too big": {Config{Addr: "127.0.0.1:1", NPEs: 2, Secret: secret}, make([]byte, MaxRecord+1)},
		"short secret":   {Config{Addr: "127.0.0.1:1", NPEs: 2, Secret: []byte("x")}, nil},
		"no address":     {Config{Rank: 1, NPEs: 2, Secret: secret}, nil},
		"neg timeout":    {Config{Addr: "127.0.0.1:1", NPEs: 2, Secret: secret, Timeout: -1}, nil},
	} {
		if _, err := Exchange(context.Background(), tc.cfg, tc.rec); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	ln := listen(t)
	if _, err := Exchange(context.Background(), Config{Listener: ln, Rank: 1, NPEs: 2, Secret: secret}, nil); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("listener on rank 1: %v", err)
	}
	if _, err := ln.Accept(); err == nil {
		t.Error("Exchange did not close the listener it refused")
	}
}

// TestTLSMismatchesRefused: a client that does not trust rank 0's
// certificate fails at once with ErrTLS (rank 0 spoke). A plain client of
// a TLS rank 0 is cut before rank 0 says a byte, which is also how rank 0
// turns a rank away when strangers hold too many connections: it retries
// until its deadline, and its error names the TLS setting as a cause.
func TestTLSMismatchesRefused(t *testing.T) {
	cert, _, _ := secure.EphemeralCert()
	_, otherPin, _ := secure.EphemeralCert()
	for name, client := range map[string]*tls.Config{"wrong pin": secure.ClientConfig(otherPin), "plain client": nil} {
		t.Run(name, func(t *testing.T) {
			ln := listen(t)
			ctx, cancel := context.WithCancel(context.Background())
			server := start(ctx, Config{Listener: ln, NPEs: 2, Secret: secret, ServerTLS: secure.ServerConfig(cert)}, nil)
			_, err := Exchange(context.Background(), Config{Addr: ln.Addr().String(), Rank: 1, NPEs: 2, Secret: secret, ClientTLS: client, Timeout: 2 * time.Second}, nil)
			// Both at once (within the 2 s timeout): rank 0 answers a
			// plain client in plaintext that it requires TLS, which the
			// client must not read as being turned away and retry.
			switch {
			case !errors.Is(err, errs.ErrTLS) || errors.Is(err, errs.ErrTimeout) || errors.Is(err, errs.ErrPEFailed):
				t.Fatalf("%s: %v, want ErrTLS at once", name, err)
			case client == nil && !strings.Contains(err.Error(), "TLS setting"):
				t.Fatalf("plain client: %v, want the TLS setting named", err)
			}
			cancel()
			awaitCancelled(t, "server", server)
		})
	}
}

// TestAuthFailureNamedInVerdict: rank 2 runs with another job secret. Rank
// 0's verdict names rank 2 missing and says a connection failed
// authentication, and rank 1, started before rank 0 (so its own deadline
// comes first), gets that verdict instead of timing out with nothing to say.
func TestAuthFailureNamedInVerdict(t *testing.T) {
	ln := listen(t)
	logs := newLogSink()
	cfg := Config{Addr: ln.Addr().String(), NPEs: 3, Secret: secret, Timeout: 2 * time.Second}
	one := cfg
	one.Rank, one.Timeout = 1, time.Second
	first := start(context.Background(), one, record(1))
	srv := cfg
	srv.Listener, srv.Logger = ln, slog.New(logs)
	server := start(context.Background(), srv, record(0))
	logs.waitFor(t, "rank arrived rank=1")
	bad := cfg
	bad.Rank, bad.Secret = 2, []byte("not-the-job-secret-at-all")
	if _, err := Exchange(context.Background(), bad, record(2)); !errors.Is(err, errs.ErrTLS) {
		t.Fatalf("rank 2 with a wrong secret: %v, want ErrTLS", err)
	}
	for rank, ch := range map[int]<-chan result{0: server, 1: first} {
		r := <-ch
		if r.err == nil || !strings.Contains(r.err.Error(), "rank 2") || !strings.Contains(r.err.Error(), "failed authentication") {
			t.Errorf("rank %d: %v, want a verdict naming rank 2 and the failed authentication", rank, r.err)
		}
	}
}

// TestProbe: a probe authenticates, reads rank 0's progress and clock, and
// is not counted as a rank; a probe with a wrong secret fails with ErrTLS;
// the exchange then completes as if no probe had come.
func TestProbe(t *testing.T) {
	ln := listen(t)
	logs := newLogSink()
	cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: 20 * time.Second}
	cert, pin, _ := secure.EphemeralCert()
	cfg.ServerTLS, cfg.ClientTLS = secure.ServerConfig(cert), secure.ClientConfig(pin)
	srv := cfg
	srv.Listener, srv.Logger = ln, slog.New(logs)
	server := start(context.Background(), srv, record(0))
	res, err := Probe(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Same host, same clock: the skew is within the round trip.
	if res.Arrived != 1 || res.NPEs != 2 || res.Skew > res.RTT || -res.Skew > res.RTT {
		t.Fatalf("probe: %+v", res)
	}
	bad := cfg
	bad.Secret = []byte("not-the-job-secret-at-all")
	if _, err := Probe(context.Background(), bad); !errors.Is(err, errs.ErrTLS) {
		t.Fatalf("probe with a wrong secret: %v, want ErrTLS", err)
	}
	good := cfg
	good.Rank = 1
	checkTable(t, 1, <-start(context.Background(), good, record(1)), 2)
	checkTable(t, 0, <-server, 2)
}

// TestProbeReadsSkew: a rank 0 whose clock is off by seconds, either way,
// is reported so (Skew is rank 0's clock minus the prober's, good to the
// round trip), which is what shmem-config --diagnose shows.
func TestProbeReadsSkew(t *testing.T) {
	for _, off := range []time.Duration{3 * time.Second, -2500 * time.Millisecond} {
		ln := listen(t)
		cfg := Config{Addr: ln.Addr().String(), NPEs: 2, Secret: secret, Timeout: 20 * time.Second}
		srv := cfg
		srv.Listener, srv.clock = ln, func() time.Time { return time.Now().Add(off) }
		server := start(context.Background(), srv, record(0))
		res, err := Probe(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d := res.Skew - off; d > res.RTT || -d > res.RTT {
			t.Errorf("rank 0's clock %v off: skew %v (round trip %v)", off, res.Skew, res.RTT)
		}
		peer := cfg
		peer.Rank = 1
		checkTable(t, 1, <-start(context.Background(), peer, record(1)), 2)
		checkTable(t, 0, <-server, 2)
	}
}
