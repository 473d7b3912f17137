package secure

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// pair runs Handshake on both ends of a loopback TCP connection, wrapping
// each end in TLS when its config is non-nil, and returns both errors.
func pair(t *testing.T, srvTLS, cliTLS *tls.Config, srvSecret, cliSecret []byte) (srvErr, cliErr error) {
	t.Helper()
	return pairOf(t, srvTLS, cliTLS, srvSecret, cliSecret, ServiceData, ServiceData)
}

// pairOf is pair with the service each side names.
func pairOf(t *testing.T, srvTLS, cliTLS *tls.Config, srvSecret, cliSecret []byte, srvSvc, cliSvc Service) (srvErr, cliErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	deadline := time.Now().Add(10 * time.Second)
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		if srvTLS != nil {
			c = tls.Server(c, srvTLS)
		}
		err = Handshake(c, srvSecret, srvSvc, true, deadline)
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if cliTLS != nil {
		c = tls.Client(c, cliTLS)
	}
	cliErr = Handshake(c, cliSecret, cliSvc, false, deadline)
	// Closing the client before waiting for the server lets a server
	// blocked on a refused client see EOF instead of its deadline.
	c.Close()
	srvErr = <-done
	return srvErr, cliErr
}

// pki is a throwaway CA with issued certificates, written as PEM files.
type pki struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caFile string
	serial int64
}

func newPKI(t *testing.T, name string) *pki {
	t.Helper()
	key := mustKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &pki{dir: t.TempDir(), ca: ca, caKey: key, serial: 100}
	p.caFile = p.write(t, name+"-ca.pem", "CERTIFICATE", der)
	return p
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	f := filepath.Join(p.dir, name)
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// issue makes a leaf for 127.0.0.1 usable as server and client and returns
// its serial and the paths of its certificate and key.
func (p *pki) issue(t *testing.T, name string) (serial *big.Int, certFile, keyFile string) {
	t.Helper()
	p.serial++
	key := mustKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl.SerialNumber, p.write(t, name+".pem", "CERTIFICATE", der), p.write(t, name+"-key.pem", "EC PRIVATE KEY", kder)
}

// crl writes a CRL revoking serials, signed by signer's CA.
func (p *pki) crl(t *testing.T, signer *pki, serials ...*big.Int) string {
	t.Helper()
	var entries []x509.RevocationListEntry
	for _, s := range serials {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: s, RevocationTime: time.Now()})
	}
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number:                    big.NewInt(1),
		ThisUpdate:                time.Now().Add(-time.Minute),
		NextUpdate:                time.Now().Add(time.Hour),
		RevokedCertificateEntries: entries,
	}, signer.ca, signer.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, "crl.pem", "X509 CRL", der)
}
