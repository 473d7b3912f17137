package membership

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: Form's failure and
// Close wait for memberlist's goroutines (gang).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logSink records Info-and-above log lines so tests can look for refusals.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	s.mu.Lock()
	s.lines = append(s.lines, b.String())
	s.mu.Unlock()
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

// find returns the first line containing every part.
func (s *logSink) find(parts ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
next:
	for _, l := range s.lines {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		return l
	}
	return ""
}

// freePort reserves a loopback port for a seed; the tiny window before
// memberlist binds it again is acceptable in tests.
func freePort(t testing.TB) int {
	t.Helper()
	// Below the ephemeral range, so no other test's socket takes it
	// before memberlist binds it (bootstrap.FreePort).
	port, err := bootstrap.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// job returns n configs of one job on loopback; the first two listen on
// reserved ports and serve as seeds for all.
func job(t testing.TB, n, npes int, log *slog.Logger) []Config {
	t.Helper()
	ports := []int{freePort(t), freePort(t)}
	seeds := []string{fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])}
	cfgs := make([]Config, n)
	for i := range cfgs {
		c := DefaultConfig()
		c.JobID = "job-" + t.Name()
		c.Version = "v1"
		c.Secret = []byte("secret of " + t.Name())
		c.NPEs = npes
		c.BindAddr = "127.0.0.1"
		c.Seeds = seeds
		c.Meta = []byte(fmt.Sprintf("record %d", i))
		c.Logger = log
		// Only bounds a failure. BenchmarkForm16 under -race on 2 cores
		// whose load average was 4-8 (other test binaries and two busy
		// loops) formed 16 processes in 0.2-4 s, worst seen 18.5 s; 30 s
		// keeps a loaded CI host from failing while a real failure still
		// shows in half the old 60 s.
		c.FormTimeout = 30 * time.Second
		if i < len(ports) {
			c.BindPort = ports[i]
		}
		cfgs[i] = c
	}
	return cfgs
}

// formAll runs Form for every config at once.
func formAll(cfgs []Config) ([]*World, []error) {
	ws := make([]*World, len(cfgs))
	es := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Go(func() { ws[i], es[i] = Form(context.Background(), cfgs[i]) })
	}
	wg.Wait()
	return ws, es
}

func closeAll(t testing.TB, ws []*World) {
	t.Helper()
	for _, w := range ws {
		if w != nil {
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}

func quietLogger() (*slog.Logger, *logSink) {
	s := &logSink{}
	return slog.New(s), s
}

// sameTable checks every world holds the identical table and knows itself.
func sameTable(t *testing.T, ws []*World) {
	t.Helper()
	var ref []Member
	for _, w := range ws {
		if w == nil {
			continue
		}
		m := w.Members()
		if ref == nil {
			ref = m
		}
		if len(m) != len(ref) {
			t.Fatalf("table sizes differ: %d vs %d", len(m), len(ref))
		}
		for r := range m {
			if m[r].Rank != r || m[r].Name != ref[r].Name || m[r].Addr != ref[r].Addr || string(m[r].Meta) != string(ref[r].Meta) {
				t.Fatalf("rank %d differs: %+v vs %+v", r, m[r], ref[r])
			}
		}
		if s := w.Self(); m[s.Rank].Name != s.Name {
			t.Fatalf("Self %+v is not at its rank in the table", s)
		}
	}
}
