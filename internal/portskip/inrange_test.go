package portskip

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// ports is an opener over a set of taken ports that records the ports
// tried.
type ports struct {
	taken map[int]bool
	tried []int
}

func (p *ports) open(port int) (int, error) {
	p.tried = append(p.tried, port)
	if p.taken[port] {
		return 0, fmt.Errorf("bind :%d: %w", port, syscall.EADDRINUSE)
	}
	return port, nil
}

// isRotation reports whether tried is want from some start on, wrapping
// around: the ports in turn, each once.
func isRotation(tried, want []int) bool {
	if len(tried) > len(want) {
		return false
	}
	for s := range want {
		if slices.Equal(tried, append(slices.Clone(want[s:]), want[:s]...)[:len(tried)]) {
			return true
		}
	}
	return false
}

// Taken ports are passed over for the next; the skipped ones are never
// tried; the ports are tried in turn from some start, each once. Run a
// number of times, so that the random start falls on the taken ports too.
func TestInRangeNextOnTaken(t *testing.T) {
	for range 64 {
		p := &ports{taken: map[int]bool{40000: true, 40002: true, 40004: true}}
		got, err := InRange("op", 1, "R=40000-40004", "on h", 40000, 40004, []int{40001}, p.open)
		if err != nil || got != 40003 {
			t.Fatalf("InRange: %d, %v; want 40003, the one free port not skipped", got, err)
		}
		if slices.Contains(p.tried, 40001) || !isRotation(p.tried, []int{40000, 40002, 40003, 40004}) {
			t.Fatalf("tried %v: want the ports in turn, each once, never the skipped 40001", p.tried)
		}
	}
}

// With every port taken or skipped it fails with errs.ErrBootstrap naming
// op, pe, the range, where and the last error, having tried each port
// not skipped once.
func TestInRangeAllTaken(t *testing.T) {
	p := &ports{taken: map[int]bool{40000: true, 40002: true}}
	_, err := InRange("fabric.Open", 2, "SHMEM_PORT_RANGE=40000-40002", "for the fabric endpoint", 40000, 40002, []int{40001}, p.open)
	var e *errs.Error
	if !errors.As(err, &e) || !errors.Is(err, errs.ErrBootstrap) || e.Op != "fabric.Open" || e.PE != 2 {
		t.Fatalf("InRange: %v; want fabric.Open (PE 2) wrapping ErrBootstrap", err)
	}
	for _, want := range []string{"SHMEM_PORT_RANGE=40000-40002", "for the fabric endpoint", "address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	slices.Sort(p.tried)
	if !slices.Equal(p.tried, []int{40000, 40002}) {
		t.Errorf("tried %v, want 40000 and 40002 once each", p.tried)
	}
}

// Another error ends the search and is returned as it is.
func TestInRangeOtherError(t *testing.T) {
	boom := errs.New("Listen", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "listen on h:1: permission denied")
	tries := 0
	_, err := InRange("Listen", errs.NoPE, "R=1-9", "on h", 1, 9, nil, func(int) (int, error) {
		tries++
		return 0, boom
	})
	if err != boom || tries != 1 {
		t.Fatalf("InRange: %v after %d tries; want the opener's error after 1", err, tries)
	}
}
