package errs

import (
	"errors"
	"fmt"
	"testing"
)

// TestNewStatesTheSentinelOnce: an inner error of the same sentinel,
// formatted into the detail, does not repeat the sentinel's text; one of
// another sentinel keeps it; the caller's arguments are not changed.
func TestNewStatesTheSentinelOnce(t *testing.T) {
	inner := New("Listen", NoPE, NoPE, ErrBootstrap, "every port is taken")
	args := []any{"127.0.0.1", inner}
	err := New("Init", 0, NoPE, ErrBootstrap, "control listener on %s: %v", args...)
	want := "shmem: Init (PE 0): control listener on 127.0.0.1: shmem: Listen: every port is taken: bootstrap failed"
	if err.Error() != want {
		t.Fatalf("got  %q\nwant %q", err.Error(), want)
	}
	if args[1] != inner {
		t.Fatalf("the caller's argument was replaced: %v", args[1])
	}
	other := fmt.Errorf("handshake: %w", ErrTLS)
	err = New("Init", 0, NoPE, ErrBootstrap, "dial: %v", other)
	if want := "shmem: Init (PE 0): dial: handshake: TLS failure: bootstrap failed"; err.Error() != want || !errors.Is(err, ErrBootstrap) {
		t.Fatalf("got %q", err.Error())
	}
}
