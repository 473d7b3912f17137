package secure

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEphemeralCert(t *testing.T) {
	cert, pin, err := EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	if pin != sha256.Sum256(cert.Certificate[0]) {
		t.Fatal("pin is not the SHA-256 of the leaf DER")
	}
	pub, ok := cert.Leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Fatalf("key is %T, want ECDSA P-256", cert.Leaf.PublicKey)
	}
	if got := cert.Leaf.NotAfter.Sub(cert.Leaf.NotBefore); got > EphemeralValidity+clockSkew+time.Second {
		t.Fatalf("validity %v exceeds %v", got, EphemeralValidity+clockSkew)
	}
	_, pin2, err := EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	if pin == pin2 {
		t.Fatal("two ephemeral certificates share a pin")
	}
}

func TestConfigsAreTLS13Only(t *testing.T) {
	cert, pin, _ := EphemeralCert()
	for name, c := range map[string]*tls.Config{"server": ServerConfig(cert), "client": ClientConfig(pin)} {
		if c.MinVersion != tls.VersionTLS13 || c.MaxVersion != tls.VersionTLS13 {
			t.Errorf("%s: versions %x..%x, want TLS 1.3 only", name, c.MinVersion, c.MaxVersion)
		}
	}
}

func TestPinnedTLSWithSecretSucceeds(t *testing.T) {
	cert, pin, err := EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	srvErr, cliErr := pair(t, ServerConfig(cert), ClientConfig(pin), testSecret, testSecret)
	if srvErr != nil || cliErr != nil {
		t.Fatalf("server: %v, client: %v", srvErr, cliErr)
	}
}

func TestPlainTCPWithSecretSucceeds(t *testing.T) {
	srvErr, cliErr := pair(t, nil, nil, testSecret, testSecret)
	if srvErr != nil || cliErr != nil {
		t.Fatalf("server: %v, client: %v", srvErr, cliErr)
	}
}

func TestWrongPinRefused(t *testing.T) {
	cert, _, _ := EphemeralCert()
	_, otherPin, _ := EphemeralCert()
	srvErr, cliErr := pair(t, ServerConfig(cert), ClientConfig(otherPin), testSecret, testSecret)
	if !errors.Is(cliErr, errs.ErrTLS) || !strings.Contains(cliErr.Error(), "pin") {
		t.Fatalf("client error = %v, want ErrTLS naming the pin", cliErr)
	}
	if !errors.Is(srvErr, errs.ErrTLS) {
		t.Fatalf("server error = %v, want ErrTLS", srvErr)
	}
}

func TestPlainClientAgainstTLSServerRefused(t *testing.T) {
	cert, _, _ := EphemeralCert()
	srvErr, cliErr := pair(t, ServerConfig(cert), nil, testSecret, testSecret)
	if !errors.Is(srvErr, errs.ErrTLS) || !errors.Is(cliErr, errs.ErrTLS) {
		t.Fatalf("server: %v, client: %v; want both ErrTLS", srvErr, cliErr)
	}
}

func TestTLSClientAgainstPlainServerRefused(t *testing.T) {
	_, pin, _ := EphemeralCert()
	srvErr, cliErr := pair(t, nil, ClientConfig(pin), testSecret, testSecret)
	if !errors.Is(srvErr, errs.ErrTLS) || !strings.Contains(srvErr.Error(), "magic") {
		t.Fatalf("server error = %v, want ErrTLS about bad magic", srvErr)
	}
	if !errors.Is(cliErr, errs.ErrTLS) {
		t.Fatalf("client error = %v, want ErrTLS", cliErr)
	}
}

func TestWrongSecretRefused(t *testing.T) {
	cert, pin, _ := EphemeralCert()
	other := []byte("fedcba9876543210fedcba9876543210")
	for _, tc := range []struct {
		name     string
		srv, cli *tls.Config
	}{{"tls", ServerConfig(cert), ClientConfig(pin)}, {"plain", nil, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			srvErr, cliErr := pair(t, tc.srv, tc.cli, testSecret, other)
			if !errors.Is(srvErr, errs.ErrTLS) || !strings.Contains(srvErr.Error(), "does not know the job secret") {
				t.Fatalf("server error = %v", srvErr)
			}
			// Told in so many words, not merely cut: a client may retry
			// a cut (a listener shedding connections), not this.
			if !errors.Is(cliErr, errs.ErrTLS) || !errors.Is(cliErr, ErrRefused) {
				t.Fatalf("client error = %v, want ErrTLS and ErrRefused", cliErr)
			}
		})
	}
}

func TestShortSecretRejected(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, s := range [][]byte{nil, []byte("short")} {
		if err := Handshake(a, s, ServiceData, true, time.Time{}); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Fatalf("secret of %d bytes: %v, want ErrInvalidArgument", len(s), err)
		}
	}
}

func TestGarbageRefused(t *testing.T) {
	for _, garbage := range []string{
		"GET / HTTP/1.1\r\nHost: example\r\nAccept: */*\r\n\r\n",
		"GSHA\x03CD" + strings.Repeat("n", 32),                           // future version
		"GSHA\x01C" + strings.Repeat("n", 32) + "n",                      // version 1 (no service byte)
		"GSHA\x02SD" + strings.Repeat("n", 32),                           // reflected role
		"GSHA\x02XD" + strings.Repeat("n", 32),                           // unknown role
		"GSHA\x02CX" + strings.Repeat("n", 32),                           // unknown service
		"GSHA\x02CD" + strings.Repeat("n", 32) + strings.Repeat("p", 32), // forged proof
	} {
		a, b := net.Pipe()
		// net.Pipe is unbuffered: write and drain concurrently.
		go b.Write([]byte(garbage))
		go io.Copy(io.Discard, b)
		err := Handshake(a, testSecret, ServiceData, true, time.Now().Add(5*time.Second))
		a.Close()
		if !errors.Is(err, errs.ErrTLS) || errors.Is(err, errs.ErrTimeout) {
			t.Errorf("garbage %q: %v, want ErrTLS without timeout", garbage[:8], err)
		}
		b.Close()
	}
}

func TestSlowPeerHitsDeadline(t *testing.T) {
	for _, server := range []bool{true, false} {
		a, b := net.Pipe()
		// The peer reads whatever is sent but never answers.
		go io.Copy(io.Discard, b)
		err := Handshake(a, testSecret, ServiceData, server, time.Now().Add(50*time.Millisecond))
		if !errors.Is(err, errs.ErrTimeout) || !errors.Is(err, errs.ErrTLS) {
			t.Errorf("server=%v: %v, want ErrTimeout and ErrTLS", server, err)
		}
		a.Close()
		b.Close()
	}
}

func TestSlowTLSPeerHitsDeadline(t *testing.T) {
	cert, _, _ := EphemeralCert()
	a, b := net.Pipe()
	go io.Copy(io.Discard, b)
	err := Handshake(tls.Server(a, ServerConfig(cert)), testSecret, ServiceData, true, time.Now().Add(50*time.Millisecond))
	if !errors.Is(err, errs.ErrTimeout) || !errors.Is(err, errs.ErrTLS) {
		t.Fatalf("%v, want ErrTimeout and ErrTLS", err)
	}
	a.Close()
	b.Close()
}

func TestHandshakeClearsDeadline(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	errc := make(chan error, 1)
	go func() { errc <- Handshake(b, testSecret, ServiceData, true, time.Now().Add(5*time.Second)) }()
	if err := Handshake(a, testSecret, ServiceData, false, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// A read after the handshake must block until the peer writes, not fail
	// on the handshake's deadline.
	go func() { b.Write([]byte{42}) }()
	var one [1]byte
	if _, err := io.ReadFull(a, one[:]); err != nil || one[0] != 42 {
		t.Fatalf("read after handshake: %v %v", one, err)
	}
}

// TestServerHandshakeVerifiedBeforeProof: ServerHandshake's hook runs once
// the client's proof checked out and before the server's proof goes out,
// so the client cannot have completed yet (a listener admits the
// connection there, and a client never finds a completed handshake's
// connection shed); with a wrong secret it does not run.
func TestServerHandshakeVerifiedBeforeProof(t *testing.T) {
	cert, pin, _ := EphemeralCert()
	for _, tc := range []struct {
		name     string
		srv, cli *tls.Config
	}{{"tls", ServerConfig(cert), ClientConfig(pin)}, {"plain", nil, nil}} {
		for _, good := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/secret-ok=%v", tc.name, good), func(t *testing.T) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				deadline := time.Now().Add(10 * time.Second)
				clientDone := make(chan error, 1)
				var clientEnded atomic.Bool
				go func() {
					c, err := net.Dial("tcp", ln.Addr().String())
					if err != nil {
						clientDone <- err
						return
					}
					defer c.Close()
					if tc.cli != nil {
						c = tls.Client(c, tc.cli)
					}
					secret := testSecret
					if !good {
						secret = []byte("fedcba9876543210fedcba9876543210")
					}
					err = Handshake(c, secret, ServiceData, false, deadline)
					clientEnded.Store(true)
					clientDone <- err
				}()
				c, err := ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if tc.srv != nil {
					c = tls.Server(c, tc.srv)
				}
				calls := 0
				srvErr := ServerHandshake(c, testSecret, ServiceData, deadline, func() {
					calls++
					if clientEnded.Load() {
						t.Error("the client's handshake ended before verified ran")
					}
				})
				cliErr := <-clientDone
				if good && (srvErr != nil || cliErr != nil || calls != 1) {
					t.Fatalf("server %v, client %v, verified ran %d times", srvErr, cliErr, calls)
				}
				if !good && (srvErr == nil || calls != 0) {
					t.Fatalf("wrong secret: server %v, verified ran %d times", srvErr, calls)
				}
			})
		}
	}
}
