package secure

import (
	"crypto/tls"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func TestMutualTLSFromPEM(t *testing.T) {
	p := newPKI(t, "job")
	_, srvCert, srvKey := p.issue(t, "server")
	_, cliCert, cliKey := p.issue(t, "client")
	srv, err := LoadPEM(p.caFile, srvCert, srvKey, "")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := LoadPEM(p.caFile, cliCert, cliKey, "")
	if err != nil {
		t.Fatal(err)
	}
	cc := cli.Client.Clone()
	cc.ServerName = "127.0.0.1"
	srvErr, cliErr := pair(t, srv.Server, cc, testSecret, testSecret)
	if srvErr != nil || cliErr != nil {
		t.Fatalf("server: %v, client: %v", srvErr, cliErr)
	}
}

func TestRevokedClientRefused(t *testing.T) {
	p := newPKI(t, "job")
	_, srvCert, srvKey := p.issue(t, "server")
	bad, cliCert, cliKey := p.issue(t, "revoked-client")
	crl := p.crl(t, p, bad, big.NewInt(999))
	srv, err := LoadPEM(p.caFile, srvCert, srvKey, crl)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := LoadPEM(p.caFile, cliCert, cliKey, "")
	if err != nil {
		t.Fatal(err)
	}
	cc := cli.Client.Clone()
	cc.ServerName = "127.0.0.1"
	srvErr, cliErr := pair(t, srv.Server, cc, testSecret, testSecret)
	if !errors.Is(srvErr, errs.ErrTLS) || !strings.Contains(srvErr.Error(), "revoked") {
		t.Fatalf("server error = %v, want ErrTLS naming the revocation", srvErr)
	}
	if !errors.Is(cliErr, errs.ErrTLS) {
		t.Fatalf("client error = %v, want ErrTLS", cliErr)
	}
}

func TestRevokedServerRefused(t *testing.T) {
	p := newPKI(t, "job")
	bad, srvCert, srvKey := p.issue(t, "revoked-server")
	_, cliCert, cliKey := p.issue(t, "client")
	srv, _ := LoadPEM(p.caFile, srvCert, srvKey, "")
	cli, err := LoadPEM(p.caFile, cliCert, cliKey, p.crl(t, p, bad))
	if err != nil {
		t.Fatal(err)
	}
	cc := cli.Client.Clone()
	cc.ServerName = "127.0.0.1"
	_, cliErr := pair(t, srv.Server, cc, testSecret, testSecret)
	if !errors.Is(cliErr, errs.ErrTLS) || !strings.Contains(cliErr.Error(), "revoked") {
		t.Fatalf("client error = %v, want ErrTLS naming the revocation", cliErr)
	}
}

func TestForeignCAClientRefused(t *testing.T) {
	p := newPKI(t, "job")
	other := newPKI(t, "other")
	_, srvCert, srvKey := p.issue(t, "server")
	_, cliCert, cliKey := other.issue(t, "intruder")
	srv, _ := LoadPEM(p.caFile, srvCert, srvKey, "")
	cli, err := LoadPEM(p.caFile, cliCert, cliKey, "")
	if err != nil {
		t.Fatal(err)
	}
	cc := cli.Client.Clone()
	cc.ServerName = "127.0.0.1"
	srvErr, _ := pair(t, srv.Server, cc, testSecret, testSecret)
	if !errors.Is(srvErr, errs.ErrTLS) {
		t.Fatalf("server error = %v, want ErrTLS", srvErr)
	}
}

func TestLoadPEMErrors(t *testing.T) {
	p := newPKI(t, "job")
	other := newPKI(t, "other")
	_, cert, key := p.issue(t, "x")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	os.WriteFile(garbage, []byte("not pem at all"), 0o600)
	for name, files := range map[string][4]string{
		"missing CA":       {filepath.Join(p.dir, "nope"), cert, key, ""},
		"garbage CA":       {garbage, cert, key, ""},
		"key mismatch":     {p.caFile, cert, p.caFile, ""},
		"garbage CRL":      {p.caFile, cert, key, garbage},
		"foreign CRL":      {p.caFile, cert, key, p.crl(t, other, big.NewInt(5))},
		"missing CRL file": {p.caFile, cert, key, filepath.Join(p.dir, "nope")},
	} {
		if _, err := LoadPEM(files[0], files[1], files[2], files[3]); !errors.Is(err, errs.ErrTLS) {
			t.Errorf("%s: %v, want ErrTLS", name, err)
		}
	}
}

func TestPEMConfigsAreTLS13Mutual(t *testing.T) {
	p := newPKI(t, "job")
	_, cert, key := p.issue(t, "x")
	m, err := LoadPEM(p.caFile, cert, key, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Server.ClientAuth != tls.RequireAndVerifyClientCert || m.Server.MinVersion != tls.VersionTLS13 || m.Client.MinVersion != tls.VersionTLS13 {
		t.Fatal("PEM configs must be TLS 1.3 with required client certificates")
	}
	if m.Client.InsecureSkipVerify {
		t.Fatal("CA-verified client config skips verification")
	}
}

// TestBothEnds: the one configuration LoadTLS gives (Material.Both) serves
// as server and client, refuses a revoked peer on the accepting side, and
// issues no session tickets (the merged configuration once took the
// client side's default, tickets on).
func TestBothEnds(t *testing.T) {
	p := newPKI(t, "job")
	_, srvCert, srvKey := p.issue(t, "server")
	_, cliCert, cliKey := p.issue(t, "client")
	bad, badCert, badKey := p.issue(t, "revoked-client")
	crl := p.crl(t, p, bad, big.NewInt(999))
	load := func(cert, key string) *tls.Config {
		m, err := LoadPEM(p.caFile, cert, key, crl)
		if err != nil {
			t.Fatal(err)
		}
		return m.Both("127.0.0.1")
	}
	srv, cli, revoked := load(srvCert, srvKey), load(cliCert, cliKey), load(badCert, badKey)
	if !srv.SessionTicketsDisabled {
		t.Error("session tickets are on")
	}
	if srvErr, cliErr := pair(t, srv, cli, testSecret, testSecret); srvErr != nil || cliErr != nil {
		t.Fatalf("server: %v, client: %v", srvErr, cliErr)
	}
	srvErr, _ := pair(t, srv, revoked, testSecret, testSecret)
	if !errors.Is(srvErr, errs.ErrTLS) || !strings.Contains(srvErr.Error(), "revoked") {
		t.Fatalf("server error = %v, want ErrTLS naming the revocation", srvErr)
	}
}
