package secure

import (
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// Two endpoints of one job (same secret, same certificate) that serve
// different services refuse each other before the proofs, and the client
// is told which service it reached: a rank that dialed the rendezvous
// address and found a PE's control lane there must not take the lane's
// closing for rank 0's.
func TestOtherServiceRefused(t *testing.T) {
	srvTLS, cliTLS, err := JobConfigs(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"tls", true}, {"plain", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := srvTLS, cliTLS
			if !tc.tls {
				s, c = nil, nil
			}
			srvErr, cliErr := pairOf(t, s, c, testSecret, testSecret, ServiceControl, ServiceRendezvous)
			if !errors.Is(cliErr, ErrOtherService) || !errors.Is(cliErr, errs.ErrTLS) ||
				!strings.Contains(cliErr.Error(), "this rendezvous client reached goshmem's control lane") {
				t.Errorf("client error = %v, want ErrOtherService naming the control lane", cliErr)
			}
			if !errors.Is(srvErr, ErrOtherService) || !strings.Contains(srvErr.Error(), "a client of goshmem's rendezvous reached this control lane") {
				t.Errorf("server error = %v, want ErrOtherService naming the rendezvous", srvErr)
			}
			// The same services agree.
			if srvErr, cliErr := pairOf(t, s, c, testSecret, testSecret, ServiceRendezvous, ServiceRendezvous); srvErr != nil || cliErr != nil {
				t.Errorf("same service: server %v, client %v", srvErr, cliErr)
			}
		})
	}
}
