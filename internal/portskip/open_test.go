package portskip

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// kernel hands out the ports of choices in turn, as a kernel asked for
// port 0 would, and records which of them were released.
type kernel struct {
	choices  []int
	next     int
	released []int
}

func (k *kernel) open() (int, int, error) {
	if k.next == len(k.choices) {
		return 0, 0, errs.New("test", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "no port left")
	}
	p := k.choices[k.next]
	k.next++
	return p, p, nil
}

func (k *kernel) release(p int) { k.released = append(k.released, p) }

// The kernel's choices of ports to skip are held while it is asked again,
// and released once a port not in skip is found; that one is kept.
func TestOpenSkipsAndReleasesHeld(t *testing.T) {
	k := &kernel{choices: []int{41000, 40001, 40000}}
	got, err := Open("op", 3, "thing", []int{40001, 41000}, k.open, k.release)
	if err != nil || got != 40000 {
		t.Fatalf("Open: %d, %v; want 40000", got, err)
	}
	if !slices.Equal(k.released, []int{41000, 40001}) {
		t.Errorf("released %v, want the held 41000 and 40001", k.released)
	}
}

// A port of 0 (the opener cannot tell its port) is taken even when skip
// holds 0, as an unparsable rendezvous address makes it.
func TestOpenTakesAnUnknownPort(t *testing.T) {
	k := &kernel{choices: []int{0}}
	if got, err := Open("op", 0, "thing", []int{0}, k.open, k.release); err != nil || got != 0 || len(k.released) != 0 {
		t.Fatalf("Open: %d, %v, released %v", got, err, k.released)
	}
}

// An opener's error is returned as it is, after the held ones are
// released.
func TestOpenReturnsTheOpenersError(t *testing.T) {
	k := &kernel{choices: []int{40001}}
	_, err := Open("op", 0, "thing", []int{40001}, k.open, k.release)
	if !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), "no port left") {
		t.Fatalf("Open: %v; want the opener's error", err)
	}
	if !slices.Equal(k.released, []int{40001}) {
		t.Errorf("released %v, want the held 40001", k.released)
	}
}

// An opener that keeps returning a skipped port (SO_REUSEPORT) ends
// after len(skip)+1 tries with errs.ErrBootstrap naming the operation,
// the PE and what was opened; every try is released.
func TestOpenGivesUp(t *testing.T) {
	k := &kernel{choices: []int{40001, 40001, 40001}}
	_, err := Open("fabric.Open", 2, "fabric endpoint", []int{40001, 41000}, k.open, k.release)
	var e *errs.Error
	if !errors.As(err, &e) || !errors.Is(err, errs.ErrBootstrap) || e.Op != "fabric.Open" || e.PE != 2 ||
		!strings.Contains(err.Error(), "fabric endpoint") || !strings.Contains(err.Error(), "[40001 41000]") {
		t.Fatalf("Open: %v", err)
	}
	if k.next != 3 || len(k.released) != 3 {
		t.Errorf("%d tries, %d released; want 3 and 3", k.next, len(k.released))
	}
}
