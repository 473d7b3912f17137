package bootstrap

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// FuzzParsePortRange: SHMEM_PORT_RANGE is text from outside; any of it
// parses to a range inside 1..65535 (or any port) or to an
// ErrInvalidArgument, and never panics.
func FuzzParsePortRange(f *testing.F) {
	for _, s := range []string{"", "8666", "20000-20100", " 1 - 65535 ", "0-10", "10-1", "-", "1-2-3", "99999", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParsePortRange(s)
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidArgument) {
				t.Fatalf("%q: %v does not wrap ErrInvalidArgument", s, err)
			}
			return
		}
		if !r.Any() && (r.Lo < 1 || r.Hi > 65535 || r.Lo > r.Hi) {
			t.Fatalf("%q parsed to %+v", s, r)
		}
	})
}
