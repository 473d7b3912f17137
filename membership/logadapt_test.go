package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLogLinesRateLimited: a stranger's undecryptable packets make
// memberlist log a line each; one passes per second, the next that passes
// says how many were held back, other kinds of warning pass on their own
// limiter, debug lines are not limited, and every undecryptable message is
// counted for Form's error.
func TestLogLinesRateLimited(t *testing.T) {
	log, sink := quietLogger()
	var n atomic.Int64
	w := newSlogWriter(log, "node-a", &n, new(atomic.Bool))
	clock := time.Unix(1000, 0)
	w.now = func() time.Time { return clock }
	for i := range 100 {
		fmt.Fprintf(w, "[ERR] memberlist: failed to receive: no installed keys could decrypt the message from=127.0.0.1:%d\n", 40000+i)
	}
	fmt.Fprintf(w, "[WARN] memberlist: Was able to connect to gsm-1 over TCP but UDP probes failed\n")
	fmt.Fprintf(w, "[INFO] memberlist: an informational line\n")
	clock = clock.Add(time.Second)
	fmt.Fprintf(w, "[ERR] memberlist: failed to receive: no installed keys could decrypt the message from=127.0.0.1:50000\n")

	sink.mu.Lock()
	lines := append([]string(nil), sink.lines...)
	sink.mu.Unlock()
	var decrypt []string
	for _, l := range lines {
		if strings.Contains(l, "could decrypt") {
			decrypt = append(decrypt, l)
		}
	}
	if len(decrypt) != 2 || !strings.Contains(decrypt[1], "suppressed_since_last=99") {
		t.Fatalf("decrypt lines %q, want 2, the second counting 99 held back", decrypt)
	}
	if sink.find("UDP probes failed") == "" || sink.find("informational") == "" {
		t.Fatalf("other lines held back: %q", lines)
	}
	if n.Load() != 101 {
		t.Fatalf("counted %d undecryptable messages, want 101", n.Load())
	}
}

// TestWrongSecretNamedInFormError: a process with another job secret
// joins a seed. Neither can read the other's gossip; both time out, and
// both errors say that messages could not be decrypted.
func TestWrongSecretNamedInFormError(t *testing.T) {
	t.Parallel()
	log, _ := quietLogger()
	cfgs := job(t, 2, 2, log)
	cfgs[1].Secret = []byte("another secret")
	cfgs[1].JobID = cfgs[0].JobID
	cfgs[1].BindPort = 0
	for i := range cfgs {
		cfgs[i].Logger = slog.New(slog.DiscardHandler)
		cfgs[i].FormTimeout = 2 * time.Second
	}
	ws, es := formAll(cfgs)
	defer closeAll(t, ws)
	for i, err := range es {
		if err == nil || !strings.Contains(err.Error(), "could not be decrypted (a process started with another SHMEM_JOB_SECRET?)") {
			t.Errorf("process %d: %v, want a timeout saying messages could not be decrypted", i, err)
		}
	}
}

// levelSink keeps every record's level and message, debug included.
type levelSink struct {
	mu      sync.Mutex
	records []string
}

func (s *levelSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *levelSink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	s.records = append(s.records, r.Level.String()+" "+r.Message)
	s.mu.Unlock()
	return nil
}
func (s *levelSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *levelSink) WithGroup(string) slog.Handler      { return s }

// TestClosedConnectionAtCloseIsDebug: memberlist's error about a socket
// Close shut under a gossip round ("Failed to send gossip ...: use of
// closed network connection", logged at ERROR in 4 of 6 clean gossip
// runs) is logged at debug level once the world is closing, and at its
// own level before; other errors keep theirs. World.Close and a failed
// Form set the flag before they shut memberlist down.
func TestClosedConnectionAtCloseIsDebug(t *testing.T) {
	sink := &levelSink{}
	var closing atomic.Bool
	w := newSlogWriter(slog.New(sink), "node-a", new(atomic.Int64), &closing)
	const gossip = "[ERR] memberlist: Failed to send gossip to 127.0.0.1:21579: write udp 127.0.0.1:21578->127.0.0.1:21579: use of closed network connection\n"
	fmt.Fprint(w, gossip)
	closing.Store(true)
	fmt.Fprint(w, gossip)
	fmt.Fprint(w, "[ERR] memberlist: Failed to send ping: another reason\n")
	want := []string{
		"ERROR memberlist: Failed to send gossip to 127.0.0.1:21579: write udp 127.0.0.1:21578->127.0.0.1:21579: use of closed network connection",
		"DEBUG memberlist: Failed to send gossip to 127.0.0.1:21579: write udp 127.0.0.1:21578->127.0.0.1:21579: use of closed network connection",
		"ERROR memberlist: Failed to send ping: another reason",
	}
	if !slices.Equal(sink.records, want) {
		t.Fatalf("records %q, want %q", sink.records, want)
	}

	log, _ := quietLogger()
	ws, es := formAll(job(t, 2, 2, log))
	if err := errors.Join(es...); err != nil {
		closeAll(t, ws)
		t.Fatal(err)
	}
	if ws[0].n.closing.Load() {
		t.Fatal("closing before Close")
	}
	closeAll(t, ws)
	if !ws[0].n.closing.Load() {
		t.Fatal("Close did not set closing")
	}
}
