package membership

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// TestForm16 forms a world of 16 on loopback. CI runs it with -race on two
// cores beside other test binaries, which is the load under which sealing
// by gossiped hashes used to stall for tens of seconds; the elapsed time is
// logged, not asserted.
func TestForm16(t *testing.T) {
	// Not parallel: 16-17 gossiping nodes load a small test machine enough.
	log, _ := quietLogger()
	cfgs := job(t, 16, 16, log)
	start := time.Now()
	ws, es := formAll(cfgs)
	t.Logf("16 members formed in %v", time.Since(start))
	defer closeAll(t, ws)
	for i, err := range es {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	sameTable(t, ws)
	// Every application record arrived, each at its owner's rank.
	for i, w := range ws {
		if got := string(ws[0].Members()[w.Self().Rank].Meta); got != fmt.Sprintf("record %d", i) {
			t.Errorf("member %d: record at its rank is %q", i, got)
		}
	}
}

func TestRankHints(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	hints := []int{2, 0, 3, 1}
	cfgs := job(t, 4, 4, log)
	for i := range cfgs {
		cfgs[i].RankHint = hints[i]
	}
	ws, es := formAll(cfgs)
	defer closeAll(t, ws)
	for i, err := range es {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	sameTable(t, ws)
	for i, w := range ws {
		if w.Self().Rank != hints[i] {
			t.Errorf("member %d: rank %d, hint %d", i, w.Self().Rank, hints[i])
		}
	}
}

// TestRefused starts a job of two and a third process that must be refused;
// the two form, the third times out having seen only itself.
func TestRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		spoil   func(*Config)
		logWant string // in the good members' refusal log line, "" when gossip never decrypts
	}{
		{"wrong-job", func(c *Config) { c.JobID = "another-job" }, `belongs to job "another-job"`},
		{"wrong-version", func(c *Config) { c.Version = "v2" }, `runs version "v2"`},
		{"wrong-npes", func(c *Config) { c.NPEs = 3 }, "expects 3 PEs"},
		{"wrong-secret", func(c *Config) { c.Secret = []byte("guess") }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log, sink := quietLogger()
			cfgs := job(t, 3, 2, log)
			tc.spoil(&cfgs[2])
			cfgs[2].FormTimeout = 2 * time.Second
			ws, es := formAll(cfgs)
			defer closeAll(t, ws)
			if es[0] != nil || es[1] != nil {
				t.Fatalf("the good members failed: %v / %v", es[0], es[1])
			}
			sameTable(t, ws[:2])
			if ws[2] != nil {
				t.Fatalf("the spoiled process formed a world: %+v", ws[2].Members())
			}
			err := es[2]
			if !errors.Is(err, errs.ErrBootstrap) || !errors.Is(err, errs.ErrTimeout) {
				t.Fatalf("spoiled process: %v, want ErrBootstrap and ErrTimeout", err)
			}
			if !strings.Contains(err.Error(), "saw 1 of") {
				t.Errorf("spoiled process error %q does not say it saw only itself", err)
			}
			if tc.logWant != "" {
				if l := sink.find("refused process", tc.logWant); l == "" {
					t.Errorf("no refusal logged containing %q", tc.logWant)
				} else {
					t.Logf("log: %s", l)
				}
			}
		})
	}
}

// TestSeventeenth starts 17 processes for a world of 16: exactly 16 form,
// identically, and the one that started last is refused.
func TestSeventeenth(t *testing.T) {
	// Not parallel: 16-17 gossiping nodes load a small test machine enough.
	log, sink := quietLogger()
	cfgs := job(t, 17, 16, log)
	ws, es := formAll(cfgs)
	defer closeAll(t, ws)
	var formed []*World
	var refused []error
	for i := range ws {
		if es[i] != nil {
			refused = append(refused, es[i])
		} else {
			formed = append(formed, ws[i])
		}
	}
	if len(formed) != 16 || len(refused) != 1 {
		t.Fatalf("%d formed, %d refused (%v); want 16 and 1", len(formed), len(refused), refused)
	}
	sameTable(t, formed)
	if !errors.Is(refused[0], errs.ErrBootstrap) || !strings.Contains(refused[0].Error(), "world full") {
		t.Fatalf("refused process: %v", refused[0])
	}
	t.Logf("refused: %v", refused[0])
	if l := sink.find("refused process", "full"); l != "" {
		t.Logf("log: %s", l)
	}
}

// TestFailureReported lets one member give up (Abandon), another leave
// gracefully and kills a third (no Leave): every survivor reports the one
// that gave up and the killed one, once each, and not the one that left.
func TestFailureReported(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfgs := job(t, 5, 5, log)
	ws, es := formAll(cfgs)
	defer closeAll(t, ws)
	for i, err := range es {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	quitter, leaver, killed := ws[2].Self().Rank, ws[3].Self().Rank, ws[4].Self().Rank
	if err := ws[2].Abandon(time.Second); err != nil {
		t.Fatal(err)
	}
	// The graceful departure next, while the leaver gossips to three
	// members (memberlist's GossipNodes): each gets the mark directly,
	// not only through a relay that the departure itself can overtake.
	// By the time the killed member is found dead (probing, seconds
	// later) every survivor has seen the departure.
	if err := ws[3].Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws[2:4] {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if err := ws[4].Close(); err != nil { // memberlist Shutdown, no Leave
		t.Fatal(err)
	}
	deadline := time.After(15 * time.Second)
	for i, w := range ws[:2] {
		var got []int
		for len(got) < 2 {
			select {
			case r := <-w.Failures():
				got = append(got, r)
				if r == killed {
					t.Logf("member %d saw killed rank %d after %v", i, r, time.Since(start))
				}
			case <-deadline:
				t.Fatalf("member %d: reported %v within 15 s, want ranks %d and %d", i, got, killed, quitter)
			}
		}
		slices.Sort(got)
		want := []int{min(killed, quitter), max(killed, quitter)}
		if !slices.Equal(got, want) {
			t.Fatalf("member %d reported %v, want %v (rank %d left gracefully)", i, got, want, leaver)
		}
	}
	// Nothing else (and no duplicate, nor the graceful leaver) is pending.
	for i, w := range ws[:2] {
		select {
		case r := <-w.Failures():
			t.Errorf("member %d: extra failure report for rank %d", i, r)
		default:
		}
	}
}

// TestFormTimeoutNamesMissingRanks starts 3 processes of a world of 4:
// each fails at FormTimeout saying how many it saw and which rank is
// missing (the unclaimed hint; without hints, how many, since ranks then
// follow names).
func TestFormTimeoutNamesMissingRanks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		hints []int
		want  string
	}{
		{"hinted", []int{0, 1, 3}, "missing ranks [2]"},
		{"unhinted", []int{-1, -1, -1}, "missing 1 (ranks follow names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log, _ := quietLogger()
			cfgs := job(t, 3, 4, log)
			for i, h := range tc.hints {
				cfgs[i].RankHint = h
				cfgs[i].FormTimeout = 1500 * time.Millisecond
			}
			ws, es := formAll(cfgs)
			defer closeAll(t, ws)
			for i, err := range es {
				if !errors.Is(err, errs.ErrBootstrap) || !errors.Is(err, errs.ErrTimeout) {
					t.Fatalf("member %d: %v, want ErrBootstrap and ErrTimeout", i, err)
				}
				if !strings.Contains(err.Error(), "saw 3 of 4") || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("member %d: %q does not name the count and %s", i, err, tc.want)
				}
			}
			t.Logf("error: %v", es[0])
		})
	}
}

// TestFormDeadSeed gives every process two seeds of which the first never
// starts: any live seed suffices.
func TestFormDeadSeed(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfgs := job(t, 4, 4, log)
	cfgs[0].BindPort = 0 // nobody listens on Seeds[0]
	ws, es := formAll(cfgs)
	defer closeAll(t, ws)
	for i, err := range es {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	sameTable(t, ws)
}

func TestFormContextCancelled(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfg := job(t, 1, 2, log)[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Form(ctx, cfg)
	if !errors.Is(err, errs.ErrBootstrap) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want ErrBootstrap and context.Canceled", err)
	}
}

func TestWorldOfOne(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfg := job(t, 1, 1, log)[0]
	cfg.Seeds = nil
	w, err := Form(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if m := w.Members(); len(m) != 1 || m[0].Name != w.Self().Name || m[0].Rank != 0 {
		t.Fatalf("members %+v", m)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Leave(time.Second); !errors.Is(err, errs.ErrFinalized) {
		t.Fatalf("Leave after Close: %v", err)
	}
}

func TestConfigRejected(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	base := job(t, 1, 2, log)[0]
	for name, spoil := range map[string]func(*Config){
		"meta too big": func(c *Config) { c.Meta = make([]byte, metaMaxSize-headerFixed-len(c.JobID)-len(c.Version)+1) },
		"no secret":    func(c *Config) { c.Secret = nil },
		"no job":       func(c *Config) { c.JobID = "" },
		"npes 0":       func(c *Config) { c.NPEs = 0 },
		"hint":         func(c *Config) { c.RankHint = 2 },
		"bind":         func(c *Config) { c.BindAddr = "localhost" },
		"unspecified":  func(c *Config) { c.BindAddr, c.AdvertiseAddr = "0.0.0.0", "" },
		// Told to the others, 0.0.0.0 made each dial itself.
		"advertise any": func(c *Config) { c.BindAddr, c.AdvertiseAddr = "0.0.0.0", "0.0.0.0" },
		"seed":          func(c *Config) { c.Seeds = []string{"127.0.0.1"} },
		"probe":         func(c *Config) { c.ProbeTimeout = c.ProbeInterval },
	} {
		c := base
		spoil(&c)
		if _, err := Form(context.Background(), c); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: got %v, want ErrInvalidArgument", name, err)
		}
	}
	// The largest Meta that fits is accepted by validation.
	c := base
	c.Meta = make([]byte, metaMaxSize-headerFixed-len(c.JobID)-len(c.Version))
	if _, err := c.resolve(); err != nil {
		t.Fatalf("maximal Meta refused: %v", err)
	}
}

// TestGracefulDeparturesInALargerWorld: in a world of 8, three members
// leave gracefully one after another. Each has more peers than
// memberlist's GossipNodes, so its gossiped Leaving mark reaches some
// only through relays, which the departure can overtake; the direct
// kindLeaving message reaches each. No survivor reports a leaver, and a
// member killed afterwards is reported by every survivor, once.
func TestGracefulDeparturesInALargerWorld(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	ws, es := formAll(job(t, 8, 8, log))
	defer closeAll(t, ws)
	for i, err := range es {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	var leavers []string
	for _, w := range ws[4:7] {
		leavers = append(leavers, w.n.self.Name)
		if err := w.Leave(time.Second); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	killed := ws[7].Self().Rank
	if err := ws[7].Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(15 * time.Second)
	for i, w := range ws[:4] {
		select {
		case r := <-w.Failures():
			if r != killed {
				t.Fatalf("member %d reported rank %d first, want the killed rank %d (ranks of %v left gracefully)", i, r, killed, leavers)
			}
		case <-deadline:
			t.Fatalf("member %d did not report the killed rank %d within 15 s", i, killed)
		}
		select {
		case r := <-w.Failures():
			t.Errorf("member %d: extra failure report for rank %d", i, r)
		default:
		}
		// The direct messages arrived (the killed member took seconds of
		// probing to find; each message, a loopback stream, a few ms).
		w.n.mu.Lock()
		for _, name := range leavers {
			if !w.n.leavers[name] {
				t.Errorf("member %d never heard directly that %s leaves", i, name)
			}
		}
		w.n.mu.Unlock()
	}
}

// TestFormPortTakenIsEADDRINUSE: Form on a port another process holds
// fails at once with ErrBootstrap wrapping syscall.EADDRINUSE, which a
// caller trying the ports of a range (SHMEM_PORT_RANGE) moves past.
func TestFormPortTakenIsEADDRINUSE(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfg := job(t, 1, 2, log)[0]
	ln, err := net.Listen("tcp", cfg.Seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Form(context.Background(), cfg)
	if !errors.Is(err, errs.ErrBootstrap) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("got %v, want ErrBootstrap and EADDRINUSE", err)
	}
	if !strings.Contains(err.Error(), "starting gossip on "+cfg.Seeds[0]+": ") {
		t.Fatalf("%q does not name the address", err)
	}
}
