package secure

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// EphemeralValidity is how long an EphemeralCert is valid. A job's bootstrap
// server lives for one job; a day covers long jobs while keeping a leaked key
// useless soon after. Validity is not what makes the certificate trusted (the
// pin is), it only bounds the damage of a leaked key.
const EphemeralValidity = 24 * time.Hour

// clockSkew backdates NotBefore so that hosts whose clocks lag slightly still
// accept a certificate made a moment ago.
const clockSkew = 5 * time.Minute

// EphemeralCert returns a fresh self-signed ECDSA P-256 certificate and its
// pin, the SHA-256 of the leaf's DER encoding. The pin must reach the clients
// over a channel they already trust (the unique ID); ClientConfig(pin) then
// accepts exactly this certificate.
func EphemeralCert() (tls.Certificate, [32]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, [32]byte{}, errs.New("EphemeralCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "generate key: %v", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, [32]byte{}, errs.New("EphemeralCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "serial: %v", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "goshmem ephemeral"},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(EphemeralValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, [32]byte{}, errs.New("EphemeralCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "create certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, [32]byte{}, errs.New("EphemeralCert", errs.NoPE, errs.NoPE, errs.ErrTLS, "parse certificate: %v", err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return cert, Pin(der), nil
}

// Pin returns the pin of a certificate: the SHA-256 of its DER encoding.
func Pin(der []byte) [32]byte { return sha256.Sum256(der) }
