package secure

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"os"

	"github.com/goshmem/shmem/internal/errs"
)

// Material is mutual-TLS configuration loaded from PEM files: Server for the
// listening side, Client for the dialing side. Both present the same
// certificate, require TLS 1.3, verify the peer's chain against the CA file
// and refuse certificates the CRL revokes.
//
// Client verifies the server's name: the caller must set Client.ServerName
// (on a Clone) to the host it dials when that is not already set.
type Material struct {
	Server *tls.Config
	Client *tls.Config
}

// LoadPEM reads a CA bundle, this process's certificate chain and key, and
// an optional CRL (crlFile "" means none). Every CRL in crlFile must be
// signed by a certificate of the CA bundle, otherwise LoadPEM fails: an
// unverifiable CRL would let anyone who can write the file decide who is
// revoked. The CRL's NextUpdate is not enforced, because a stale list still
// names the certificates known to be revoked. Errors wrap errs.ErrTLS.
func LoadPEM(caFile, certFile, keyFile, crlFile string) (*Material, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, pemErr("read CA file: %v", err)
	}
	cas, err := parseCerts(caPEM)
	if err != nil {
		return nil, pemErr("CA file %s: %v", caFile, err)
	}
	pool := x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, pemErr("load certificate and key: %v", err)
	}
	var rev revoked
	if crlFile != "" {
		crlPEM, err := os.ReadFile(crlFile)
		if err != nil {
			return nil, pemErr("read CRL file: %v", err)
		}
		if rev, err = parseCRLs(crlPEM, cas); err != nil {
			return nil, pemErr("CRL file %s: %v", crlFile, err)
		}
	}
	verify := func(cs tls.ConnectionState) error { return rev.check(cs.VerifiedChains) }
	server := &tls.Config{
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		Certificates:           []tls.Certificate{cert},
		ClientCAs:              pool,
		ClientAuth:             tls.RequireAndVerifyClientCert,
		SessionTicketsDisabled: true,
		VerifyConnection:       verify,
	}
	client := &tls.Config{
		MinVersion:       tls.VersionTLS13,
		MaxVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{cert},
		RootCAs:          pool,
		VerifyConnection: verify,
	}
	return &Material{Server: server, Client: client}, nil
}

func pemErr(detail string, args ...any) error {
	return errs.New("LoadPEM", errs.NoPE, errs.NoPE, errs.ErrTLS, detail, args...)
}

func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errNoBlock("CERTIFICATE")
	}
	return out, nil
}

type errNoBlock string

func (e errNoBlock) Error() string { return "no PEM block of type " + string(e) }

// revoked maps a CRL issuer's raw subject to the revoked serial numbers.
type revoked map[string]map[string]bool

func parseCRLs(data []byte, cas []*x509.Certificate) (revoked, error) {
	rev := revoked{}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "X509 CRL" {
			continue
		}
		crl, err := x509.ParseRevocationList(b.Bytes)
		if err != nil {
			return nil, err
		}
		if !signedByOneOf(crl, cas) {
			return nil, errUnsignedCRL{}
		}
		set := rev[string(crl.RawIssuer)]
		if set == nil {
			set = map[string]bool{}
			rev[string(crl.RawIssuer)] = set
		}
		for _, e := range crl.RevokedCertificateEntries {
			set[serialKey(e.SerialNumber)] = true
		}
	}
	if len(rev) == 0 {
		return nil, errNoBlock("X509 CRL")
	}
	return rev, nil
}

type errUnsignedCRL struct{}

func (errUnsignedCRL) Error() string { return "CRL is not signed by any certificate of the CA file" }

func signedByOneOf(crl *x509.RevocationList, cas []*x509.Certificate) bool {
	for _, ca := range cas {
		if bytes.Equal(ca.RawSubject, crl.RawIssuer) && crl.CheckSignatureFrom(ca) == nil {
			return true
		}
	}
	return false
}

func serialKey(n *big.Int) string { return n.String() }

// check refuses the connection if any certificate of any verified chain
// (roots included, in case a CA itself was revoked by its parent) is revoked
// by its issuer's CRL.
func (r revoked) check(chains [][]*x509.Certificate) error {
	if len(r) == 0 {
		return nil
	}
	for _, chain := range chains {
		for _, c := range chain {
			if set := r[string(c.RawIssuer)]; set != nil && set[serialKey(c.SerialNumber)] {
				return errs.New("TLS", errs.NoPE, errs.NoPE, errs.ErrTLS,
					"peer certificate %q (serial %s) is revoked", c.Subject.CommonName, c.SerialNumber)
			}
		}
	}
	return nil
}

// Both returns one configuration that serves as either end of a
// connection, as shmem.WithTLS takes it: m's client side, with the server
// side's client verification and serverName as the name every peer's
// certificate must carry. Its VerifyConnection runs the server side's
// check on a connection it accepted (a client certificate and no server
// name) and the client side's otherwise. Session tickets are off, as in
// m.Server: every connection shows its certificate chain.
func (m *Material) Both(serverName string) *tls.Config {
	cfg := m.Client.Clone()
	cfg.ServerName = serverName
	cfg.ClientAuth = m.Server.ClientAuth
	cfg.ClientCAs = m.Server.ClientCAs
	cfg.SessionTicketsDisabled = true
	if m.Server.VerifyConnection != nil {
		srv, cli := m.Server.VerifyConnection, m.Client.VerifyConnection
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if cs.DidResume || len(cs.PeerCertificates) > 0 && cs.ServerName == "" {
				return srv(cs)
			}
			return cli(cs)
		}
	}
	return cfg
}
