package secure

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// JobCert derives a job's TLS identity from its secret: an Ed25519 key from
// HKDF over the secret, in a self-signed certificate whose every field is
// fixed. Ed25519 signatures are deterministic, so every process of the job
// builds the byte-identical certificate, and its pin is known to anyone who
// holds the secret and to no one else. This is how the PEs of a job
// authenticate each other on every connection (control and data) without
// distributing a key.
func JobCert(secret []byte) (tls.Certificate, [32]byte, error) {
	if len(secret) < 16 {
		return tls.Certificate{}, [32]byte{}, errs.New("JobCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "job secret of %d bytes is too short", len(secret))
	}
	seed, err := hkdf.Key(sha256.New, secret, nil, "goshmem job tls key v1", ed25519.SeedSize)
	if err != nil {
		return tls.Certificate{}, [32]byte{}, errs.New("JobCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "derive key: %v", err)
	}
	key := ed25519.NewKeyFromSeed(seed)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "goshmem job"},
		NotBefore:             time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2120, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"goshmem"},
	}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, [32]byte{}, errs.New("JobCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "create certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, [32]byte{}, errs.New("JobCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "parse certificate: %v", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, Pin(der), nil
}

// JobConfigs returns mutual-TLS 1.3 configurations in which both sides
// present the job certificate and accept only a peer that presents it too.
func JobConfigs(secret []byte) (server, client *tls.Config, err error) {
	cert, pin, err := JobCert(secret)
	if err != nil {
		return nil, nil, err
	}
	verify := func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errs.New("TLS", errs.NoPE, errs.NoPE, errs.ErrTLS, "peer sent no certificate")
		}
		got := Pin(raw[0])
		if subtle.ConstantTimeCompare(got[:], pin[:]) != 1 {
			return errs.New("TLS", errs.NoPE, errs.NoPE, errs.ErrTLS, "peer does not hold this job's credentials")
		}
		return nil
	}
	server = &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		Certificates: []tls.Certificate{cert}, SessionTicketsDisabled: true,
		ClientAuth:            tls.RequireAnyClientCert,
		VerifyPeerCertificate: verify,
	}
	client = &tls.Config{
		MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13,
		Certificates: []tls.Certificate{cert}, ServerName: "goshmem",
		// The pin check replaces chain verification (see ClientConfig).
		InsecureSkipVerify:    true,
		VerifyPeerCertificate: verify,
	}
	return server, client, nil
}
