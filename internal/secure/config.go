package secure

import (
	"crypto/subtle"
	"crypto/tls"

	"github.com/goshmem/shmem/internal/errs"
)

// ServerConfig returns a TLS 1.3-only server configuration presenting cert.
// It does not ask clients for certificates: clients prove themselves with the
// job secret in Handshake. Session tickets are off so every connection runs a
// full handshake.
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		Certificates:           []tls.Certificate{cert},
		SessionTicketsDisabled: true,
	}
}

// ClientConfig returns a TLS 1.3-only client configuration that accepts a
// server only if its leaf certificate's SHA-256 equals pin. Chain and name
// verification are skipped because the pin replaces them: the pin names the
// one certificate that is trusted, whatever its issuer or subject.
func ClientConfig(pin [32]byte) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		MaxVersion: tls.VersionTLS13,
		// Safe only because VerifyConnection checks the pin on every
		// connection, resumed or not.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return checkPin(cs, pin)
		},
	}
}

func checkPin(cs tls.ConnectionState, pin [32]byte) error {
	if len(cs.PeerCertificates) == 0 {
		return errs.New("TLS", errs.NoPE, errs.NoPE, errs.ErrTLS, "server sent no certificate")
	}
	got := Pin(cs.PeerCertificates[0].Raw)
	if subtle.ConstantTimeCompare(got[:], pin[:]) != 1 {
		return errs.New("TLS", errs.NoPE, errs.NoPE, errs.ErrTLS, "server certificate does not match the pin")
	}
	return nil
}
