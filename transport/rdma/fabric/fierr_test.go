package fabric

import (
	"errors"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// A libfabric code that is an errno matches that syscall.Errno and the
// sentinel; one of libfabric's own (from FI_ERRNO_OFFSET on) only the
// sentinel. The text stays the sentinel's.
func TestFiErr(t *testing.T) {
	inUse := errs.New("fabric.Open", 3, errs.NoPE, fiErr{errs.ErrBootstrap, -int(syscall.EADDRINUSE)}, "fi_endpoint: Address already in use")
	if !errors.Is(inUse, syscall.EADDRINUSE) || !errors.Is(inUse, errs.ErrBootstrap) {
		t.Errorf("%v: want it to match EADDRINUSE and ErrBootstrap", inUse)
	}
	if got, want := inUse.Error(), "shmem: fabric.Open (PE 3): fi_endpoint: Address already in use: bootstrap failed"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	other := errs.New("fabric.Open", 3, errs.NoPE, fiErr{errs.ErrBootstrap, -261}, "fi_getinfo: No data available")
	if errors.Is(other, syscall.EADDRINUSE) || !errors.Is(other, errs.ErrBootstrap) {
		t.Errorf("%v: want ErrBootstrap only", other)
	}
	if e := (fiErr{errs.ErrBootstrap, -int(syscall.ENODATA)}); errors.Is(e, syscall.EADDRINUSE) || !errors.Is(e, syscall.ENODATA) {
		t.Errorf("%v matches the wrong errno", e)
	}
}
