package shmem_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem"
)

// TestInitMistakes: a bad SHMEM_SYMMETRIC_SIZE is named and ignored when
// WithHeapSize is given; a heap too small for the world states the
// minimum; Init without a launcher logs its one-PE world at INFO, and a
// required launcher that is missing fails Init.
func TestInitMistakes(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SHMEM_SYMMETRIC_SIZE", "garbage")
	_, err := shmem.Init(ctx)
	if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), `SHMEM_SYMMETRIC_SIZE="garbage"`) {
		t.Errorf("Init with SHMEM_SYMMETRIC_SIZE=garbage: %v, want ErrInvalidArgument naming the variable", err)
	}
	p, err := shmem.Init(ctx, shmem.WithHeapSize(1<<20))
	if err != nil {
		t.Fatalf("WithHeapSize did not win over a bad SHMEM_SYMMETRIC_SIZE: %v", err)
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHMEM_SYMMETRIC_SIZE", "")

	_, err = shmem.Init(ctx, shmem.WithHeapSize(4096))
	if !errors.Is(err, shmem.ErrOutOfMemory) || !strings.Contains(err.Error(), "give at least") {
		t.Errorf("Init with a 4 KiB heap: %v, want ErrOutOfMemory stating the minimum", err)
	}

	// Without a launcher Init makes a world of one PE, and says so at INFO.
	var logged syncBuffer
	p, err = shmem.Init(ctx, shmem.WithHeapSize(1<<20), shmem.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if p.NPEs() != 1 {
		t.Errorf("Init without a launcher: %d PEs, want 1", p.NPEs())
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
	if out := logged.String(); !strings.Contains(out, "level=INFO") || !strings.Contains(out, "world of one PE") {
		t.Errorf("Init without a launcher did not log the one-PE world at INFO:\n%s", out)
	}

	_, err = shmem.Init(ctx, shmem.WithRequireLauncher())
	if !errors.Is(err, shmem.ErrBootstrap) || !strings.Contains(err.Error(), "shmemrun") {
		t.Errorf("Init requiring a launcher without one: %v, want ErrBootstrap", err)
	}
	for _, v := range []string{"1", "true", "YES"} {
		t.Setenv("SHMEM_REQUIRE_LAUNCHER", v)
		if _, err := shmem.Init(ctx); !errors.Is(err, shmem.ErrBootstrap) {
			t.Errorf("Init with SHMEM_REQUIRE_LAUNCHER=%s and no launcher: %v, want ErrBootstrap", v, err)
		}
	}
	t.Setenv("SHMEM_REQUIRE_LAUNCHER", "sure")
	if _, err := shmem.Init(ctx); !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), "SHMEM_REQUIRE_LAUNCHER") {
		t.Errorf("Init with SHMEM_REQUIRE_LAUNCHER=sure: %v, want ErrInvalidArgument naming it", err)
	}
	t.Setenv("SHMEM_REQUIRE_LAUNCHER", "")

	// A switch goshmem does not know is an error, not the default.
	t.Setenv("SHMEM_TRANSPORT", "udp")
	if _, err := shmem.Init(ctx); !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), `SHMEM_TRANSPORT="udp"`) {
		t.Errorf("Init with SHMEM_TRANSPORT=udp: %v, want ErrInvalidArgument naming it", err)
	}
}

// TestHangReport: with WithHangReport a call blocked longer than the
// report's delay logs what it is blocked in; WithOpTimeout then ends it.
func TestHangReport(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	// SIGQUIT prints the report (to the stderr Init saw) instead of
	// ending the process.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stderr := os.Stderr
	os.Stderr = w
	p, err := shmem.Init(context.Background(), shmem.WithLogger(log), shmem.WithHangReport(time.Millisecond),
		shmem.WithOpTimeout(50*time.Millisecond), shmem.WithHeapSize(1<<20))
	os.Stderr = stderr
	if err != nil {
		t.Fatal(err)
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	err = shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
	if !errors.Is(err, shmem.ErrTimeout) || !strings.Contains(err.Error(), "WaitUntil") {
		t.Errorf("WaitUntil ended with %v, want ErrTimeout naming it", err)
	}
	report := make([]byte, 512)
	n, _ := r.Read(report) // blocks until the handler wrote
	if !strings.Contains(string(report[:n]), "goshmem hang report: PE 0") {
		t.Errorf("SIGQUIT printed %q, want the PE's hang report", report[:n])
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "msg=blocked") || !strings.Contains(out, "call=WaitUntil") || !strings.Contains(out, "heap offset") {
		t.Errorf("no hang report in the log:\n%s", out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestInitContextDeadline: an Init whose context's deadline ends it before
// the start-up timeout (rank 1 never comes) wraps context.DeadlineExceeded
// and ErrBootstrap and says the deadline ended it, where it used to report
// the start-up timeout ("within 30s") and not wrap the context's error.
func TestInitContextDeadline(t *testing.T) {
	uid, err := shmem.GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	p, err := shmem.Init(ctx, shmem.WithUniqueID(uid, 0, 2), shmem.WithTimeout(30*time.Second))
	if p != nil {
		p.Finalize()
		t.Fatal("Init of rank 0 of 2 alone succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, shmem.ErrBootstrap) {
		t.Fatalf("Init ended by its context's deadline: %v, want context.DeadlineExceeded and ErrBootstrap", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "context's deadline ended start-up") || !strings.Contains(msg, "Init (PE 0)") || strings.Contains(msg, "within 30s") {
		t.Fatalf("message %q should name Init and PE 0, say the context's deadline ended it, and not claim the 30s timeout", msg)
	}
}

// TestInitRejectsBadOptions: a zero unique ID is reported as such (it was
// reported as a TLS disagreement), and a negative WithOpTimeout is refused
// (it was accepted silently).
func TestInitRejectsBadOptions(t *testing.T) {
	_, err := shmem.Init(context.Background(), shmem.WithUniqueID(shmem.UniqueID{}, 0, 2))
	if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), "unique ID is zero") || strings.Contains(err.Error(), "TLS") {
		t.Errorf("Init with a zero unique ID: %v, want ErrInvalidArgument saying the ID is zero", err)
	}
	p, err := shmem.Init(context.Background(), shmem.WithOpTimeout(-1))
	if p != nil {
		p.Finalize()
	}
	if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), "WithOpTimeout(-1ns): negative") {
		t.Errorf("Init with WithOpTimeout(-1): %v, want ErrInvalidArgument naming it", err)
	}
}
