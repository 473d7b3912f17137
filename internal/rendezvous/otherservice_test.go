package rendezvous

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// laneOnRendezvousPort plays a PE's control lane that was handed the port
// of the unique ID's address before rank 0 bound it (the CI failure of
// examples/allgather): an endpoint of the same job, so it holds the job's
// certificate and secret, which authenticates one connection as its own
// service, reads what follows, and closes it as the lane does with a
// frame it does not expect. done closes when it has.
func laneOnRendezvousPort(t *testing.T, ln net.Listener, svc secure.Service, server *tls.Config) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer ln.Close()
		raw, err := ln.Accept()
		if err != nil {
			return
		}
		defer raw.Close()
		var c net.Conn = raw
		if server != nil {
			c = tls.Server(raw, server)
		}
		if secure.Handshake(c, secret, svc, true, time.Now().Add(10*time.Second)) == nil {
			readFrame(c)
		}
	}()
	return done
}

// TestAnotherListenerOnTheRendezvousPort: a rank that dials the unique
// ID's address and finds another listener of its job there (a PE's
// control lane holding the port) fails at once, saying so, with
// ErrBootstrap: before the handshake named the service, it passed
// authentication, sent its hello, saw the lane close the connection and
// failed with ErrPEFailed blaming PE 0, which had not even bound the port.
func TestAnotherListenerOnTheRendezvousPort(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{true: "tls", false: "plain"}[useTLS], func(t *testing.T) {
			ln := listen(t)
			cfg := Config{Addr: ln.Addr().String(), Rank: 1, NPEs: 8, Secret: secret, Timeout: time.Minute}
			var server *tls.Config
			if useTLS {
				var err error
				if server, cfg.ClientTLS, err = secure.JobConfigs(secret); err != nil {
					t.Fatal(err)
				}
			}
			lane := laneOnRendezvousPort(t, ln, secure.ServiceControl, server)
			_, err := Exchange(t.Context(), cfg, record(1))
			<-lane
			if !errors.Is(err, errs.ErrBootstrap) || !errors.Is(err, secure.ErrOtherService) ||
				errors.Is(err, errs.ErrPEFailed) || errors.Is(err, errs.ErrTimeout) || target(err) != 0 {
				t.Fatalf("rank 1: %v, want ErrBootstrap and ErrOtherService, naming PE 0 as addressed, not failed", err)
			}
			for _, want := range []string{cfg.Addr + " is not rank 0's rendezvous", "control lane"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("rank 1's error lacks %q: %v", want, err)
				}
			}
		})
	}
}
