package lane

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/goshmem/shmem/internal/actorsys"
)

// warnings is a slog handler that keeps the messages of the records at
// WARN and above.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, r.Message)
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// TestStrangersRefusalsLoggedOncePerSecond: a stranger's refused
// connection is logged at WARN, as on the other listeners, but a flood of
// them is not one line each. Before, a stranger that sent garbage left no
// line above DEBUG, and one that sent a bare hello naming another service
// (no secret needed without TLS) left one WARN line per connection: 40
// connections, 40 lines.
func TestStrangersRefusalsLoggedOncePerSecond(t *testing.T) {
	noLeaks(t)
	w := &warnings{}
	sys := actorsys.NewSystem(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(Config{Listener: ln, Secret: testSecret, System: sys, Logger: slog.New(w)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		sys.Shutdown()
	})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", l.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := dial()
	_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat("x", 64)))
	expectClosed(t, c)
	if got := w.all(); len(got) != 1 || !strings.Contains(got[0], "refused") {
		t.Fatalf("a stranger's garbage left WARN lines %q, want one refusal", got)
	}
	// A hello of goshmem's job-secret handshake naming the rendezvous:
	// no secret is needed to send it.
	hello := append([]byte("GSHA\x02CR"), make([]byte, 32)...)
	const flood = 40
	for range flood {
		c := dial()
		_, _ = c.Write(hello)
		expectClosed(t, c)
	}
	if got := w.all(); len(got) > 10 {
		t.Fatalf("%d strangers' connections left %d WARN lines, want them limited to one a second: %q", flood+1, len(got), got[:5])
	}
}
