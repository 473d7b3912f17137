package rendezvous

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

var secret = []byte("job-secret-0123456789abcdef")

func record(rank int) []byte { return []byte(fmt.Sprintf("record of rank %d", rank)) }

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

type result struct {
	recs [][]byte
	err  error
}

// start runs Exchange for cfg in a goroutine; the result arrives on the
// returned channel.
func start(ctx context.Context, cfg Config, rec []byte) <-chan result {
	ch := make(chan result, 1)
	go func() {
		recs, err := Exchange(ctx, cfg, rec)
		ch <- result{recs, err}
	}()
	return ch
}

func checkTable(t *testing.T, rank int, r result, npes int) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("rank %d: %v", rank, r.err)
	}
	if len(r.recs) != npes {
		t.Fatalf("rank %d got %d records, want %d", rank, len(r.recs), npes)
	}
	for i, rec := range r.recs {
		if string(rec) != string(record(i)) {
			t.Fatalf("rank %d: record %d = %q, want %q", rank, i, rec, record(i))
		}
	}
}

// logSink is a slog handler that keeps messages and signals each one.
type logSink struct {
	mu    sync.Mutex
	lines []string
	ch    chan string
}

func newLogSink() *logSink { return &logSink{ch: make(chan string, 1024)} }

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logSink) WithGroup(string) slog.Handler            { return l }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, b.String())
	l.mu.Unlock()
	select {
	case l.ch <- b.String():
	default:
	}
	return nil
}

// waitFor blocks until a log line containing s appears, failing the test
// if none does within 20 s.
func (l *logSink) waitFor(t *testing.T, s string) {
	t.Helper()
	limit := time.NewTimer(20 * time.Second)
	defer limit.Stop()
	for {
		select {
		case line := <-l.ch:
			if strings.Contains(line, s) {
				return
			}
		case <-limit.C:
			t.Fatalf("no log line containing %q", s)
		}
	}
}

// rank0And1 starts rank 0 serving base's world on a new listener, and rank
// 1, and returns once rank 0 has logged rank 1's arrival: base with the
// address, rank 0's log, and the two ranks' results.
func rank0And1(t *testing.T, base Config) (Config, *logSink, <-chan result, <-chan result) {
	t.Helper()
	ln := listen(t)
	logs := newLogSink()
	base.Addr = ln.Addr().String()
	srv := base
	srv.Listener, srv.Logger = ln, slog.New(logs)
	server := start(context.Background(), srv, record(0))
	one := base
	one.Rank = 1
	first := start(context.Background(), one, record(1))
	logs.waitFor(t, "rank arrived rank=1")
	return base, logs, server, first
}
