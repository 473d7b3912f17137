package shmem_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem"
)

// blockedHandler is a slog handler that reports the hang report of a
// blocked call (WithHangReport) on a channel, so that a test knows the
// call is blocked without sleeping.
type blockedHandler struct{ blocked chan<- string }

func (h blockedHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h blockedHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h blockedHandler) WithGroup(string) slog.Handler            { return h }
func (h blockedHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "blocked" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "call" {
			select {
			case h.blocked <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}

// TestFinalizeEndsBlockedWait: a WaitUntil blocked when another goroutine
// of its PE calls Finalize ends with ErrFinalized saying that Finalize
// ended the wait; it said the WaitUntil was "called after Finalize".
func TestFinalizeEndsBlockedWait(t *testing.T) {
	blocked := make(chan string, 1)
	p, err := shmem.Init(context.Background(), shmem.WithLogger(slog.New(blockedHandler{blocked})), shmem.WithHangReport(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- shmem.WaitUntil(p, flag, shmem.CmpEQ, 1) }()
	if call := <-blocked; call != "WaitUntil" {
		t.Fatalf("hang report of %q, want WaitUntil", call)
	}
	if err := p.Finalize(); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, shmem.ErrFinalized) || !strings.Contains(err.Error(), "WaitUntil") ||
		!strings.Contains(err.Error(), "ended the wait") || strings.Contains(err.Error(), "called after Finalize") {
		t.Fatalf("WaitUntil blocked when Finalize was called: %v, want ErrFinalized saying Finalize ended the wait", err)
	}
}
