package secure

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func TestJobCertIsDeterministic(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, 32)
	a, pa, err := JobCert(secret)
	if err != nil {
		t.Fatal(err)
	}
	b, pb, err := JobCert(secret)
	if err != nil {
		t.Fatal(err)
	}
	if pa != pb || !bytes.Equal(a.Certificate[0], b.Certificate[0]) {
		t.Fatal("two derivations from one secret differ")
	}
	_, pc, err := JobCert(bytes.Repeat([]byte{8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	if pc == pa {
		t.Fatal("different secrets gave the same pin")
	}
	if _, _, err := JobCert([]byte("short")); !errors.Is(err, errs.ErrTLS) {
		t.Fatalf("short secret: %v", err)
	}
}

// dialJob runs one TLS handshake between a server holding serverSecret and a
// client holding clientSecret over an in-memory pipe.
func dialJob(t *testing.T, serverSecret, clientSecret []byte) (serverErr, clientErr error) {
	t.Helper()
	srv, _, err := JobConfigs(serverSecret)
	if err != nil {
		t.Fatal(err)
	}
	_, cli, err := JobConfigs(clientSecret)
	if err != nil {
		t.Fatal(err)
	}
	// Real sockets, not net.Pipe: a refusal writes an alert while the
	// other side writes too, which an unbuffered pipe turns into deadlock.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		a, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		s := tls.Server(a, srv)
		err = s.Handshake()
		if err == nil {
			// TLS 1.3 client certificates are checked after the client's
			// Finished; a read surfaces a rejection on the server side.
			_, err = s.Read(make([]byte, 1))
		}
		a.Close()
		done <- err
	}()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(b, cli)
	clientErr = c.Handshake()
	if clientErr == nil {
		_, clientErr = c.Write([]byte{1})
	}
	b.Close()
	return <-done, clientErr
}

func TestJobConfigsAcceptSameJob(t *testing.T) {
	s := bytes.Repeat([]byte{1}, 32)
	serverErr, clientErr := dialJob(t, s, s)
	if serverErr != nil || clientErr != nil {
		t.Fatalf("same job refused: server %v, client %v", serverErr, clientErr)
	}
}

func TestJobConfigsRefuseOtherJob(t *testing.T) {
	serverErr, clientErr := dialJob(t, bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if serverErr == nil && clientErr == nil {
		t.Fatal("a peer of another job was accepted")
	}
}
