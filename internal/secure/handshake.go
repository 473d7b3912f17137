package secure

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// MinSecretLen is the shortest job secret Handshake accepts. Shorter secrets
// (the empty one above all) would let a guesser in.
const MinSecretLen = 16

// SecretLen is the length of the secrets NewSecret makes.
const SecretLen = 32

// NewSecret returns a fresh random job secret of SecretLen bytes.
func NewSecret() ([]byte, error) {
	s := make([]byte, SecretLen)
	if _, err := rand.Read(s); err != nil {
		return nil, errs.New("NewSecret", errs.NoPE, errs.NoPE, errs.ErrTLS, "%v", err)
	}
	return s, nil
}

// Wire format, version 2. The client sends a hello, the server answers with
// its own, the client sends its proof, and the server answers with its proof
// only once the client's checked out, so a peer without the secret learns
// nothing but a refusal (a fixed line in the proof's place, then the close)
// and which goshmem service listens there.
//
//	hello: "GSHA" | version (1 byte) | role ('C' or 'S') | service (1 byte) | nonce (32 bytes)
//	proof: HMAC-SHA256(secret, label | service | client nonce | server nonce | binding)
//
// label differs per role so that a proof cannot be reflected back; service
// (see Service) is the one both hellos named, so a proof made for one
// service is worthless to another; binding is TLS keying material (empty on
// plain TCP), so a proof made on one TLS connection is worthless on another.
// Version 1 had no service byte.
const (
	helloMagic   = "GSHA"
	helloVersion = 2
	roleClient   = 'C'
	roleServer   = 'S'
	nonceLen     = 32
	helloLen     = len(helloMagic) + 3 + nonceLen
	proofLen     = sha256.Size
	ekmLabel     = "EXPORTER-goshmem-auth-v1"
)

type hello struct {
	role    byte
	service Service
	nonce   [nonceLen]byte
}

func (h hello) marshal() [helloLen]byte {
	var b [helloLen]byte
	copy(b[:], helloMagic)
	b[4] = helloVersion
	b[5] = h.role
	b[6] = byte(h.service)
	copy(b[7:], h.nonce[:])
	return b
}

// parseHello decodes a hello received from the peer.
func parseHello(b []byte) (hello, error) {
	var h hello
	if len(b) != helloLen {
		return h, fmt.Errorf("hello is %d bytes, want %d", len(b), helloLen)
	}
	if string(b[:4]) != helloMagic {
		return h, errors.New("peer is not a goshmem endpoint (bad magic)")
	}
	if b[4] != helloVersion {
		return h, fmt.Errorf("peer speaks auth version %d, want %d", b[4], helloVersion)
	}
	if b[5] != roleClient && b[5] != roleServer {
		return h, fmt.Errorf("bad role byte %#x", b[5])
	}
	if !Service(b[6]).known() {
		return h, fmt.Errorf("unknown service byte %#x", b[6])
	}
	h.role = b[5]
	h.service = Service(b[6])
	copy(h.nonce[:], b[7:])
	return h, nil
}

func proof(secret []byte, role byte, svc Service, client, server *[nonceLen]byte, binding []byte) []byte {
	m := hmac.New(sha256.New, secret)
	if role == roleClient {
		m.Write([]byte("goshmem auth v2 client proof"))
	} else {
		m.Write([]byte("goshmem auth v2 server proof"))
	}
	m.Write([]byte{byte(svc)})
	m.Write(client[:])
	m.Write(server[:])
	m.Write(binding)
	return m.Sum(nil)
}

// Handshake authenticates the peer of conn with the job secret and must run
// before any other byte of conn is read or written. When conn is a *tls.Conn
// it first completes the TLS handshake and binds the proof to that TLS
// session. Both sides prove knowledge of secret over nonces from both sides;
// the secret itself never crosses the wire. Both sides name svc, the service
// of the listener (see Service): a peer of another service is refused before
// the proofs, and the client learns which service it reached.
//
// deadline bounds the whole exchange (zero means none). On return conn has
// no deadline set. Handshake never closes conn: on error the caller must
// close it. Errors wrap errs.ErrTLS, and also errs.ErrTimeout when the
// deadline passed, or ErrOtherService when the peer serves another service.
func Handshake(conn net.Conn, secret []byte, svc Service, server bool, deadline time.Time) error {
	return handshakeWithin(conn, secret, svc, server, deadline, nil)
}

// ServerHandshake is Handshake's server side with a hook: verified runs
// once the client's proof checked out, before this side's proof goes out.
// A listener that sheds unauthenticated connections under load admits the
// connection there (internal/admit): a client that completes its handshake
// then never finds the connection shed after it, which it could not tell
// from the listener's death or refusal.
func ServerHandshake(conn net.Conn, secret []byte, svc Service, deadline time.Time, verified func()) error {
	return handshakeWithin(conn, secret, svc, true, deadline, verified)
}

// VerifiedHook returns the admission hook that c, a connection a
// listener accepted, carries for ServerHandshake's verified: a method
// Verified() of c or of a connection under it (tls.Conn's NetConn, and
// the like), nil when none has one. A listener whose owner runs the
// job-secret handshake through a callback it does not write (rdma's
// Config.Authenticate) passes its admission that way.
func VerifiedHook(c net.Conn) func() {
	for range 8 { // a few layers at most; a loop of NetConns ends too
		if v, ok := c.(interface{ Verified() }); ok {
			return v.Verified
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

func handshakeWithin(conn net.Conn, secret []byte, svc Service, server bool, deadline time.Time, verified func()) error {
	if len(secret) < MinSecretLen {
		return errs.New("Handshake", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument,
			"job secret is %d bytes, need at least %d", len(secret), MinSecretLen)
	}
	if !svc.known() {
		return errs.New("Handshake", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "unknown %v", svc)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return authErr(err, "set deadline")
	}
	err := handshake(conn, secret, svc, server, verified)
	if derr := conn.SetDeadline(time.Time{}); err == nil && derr != nil {
		err = authErr(derr, "clear deadline")
	}
	return err
}

func handshake(conn net.Conn, secret []byte, svc Service, server bool, verified func()) error {
	var binding []byte
	if tc, ok := conn.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			if _, plain := errors.AsType[tls.RecordHeaderError](err); plain {
				return errs.New("Handshake", errs.NoPE, errs.NoPE, errNotTLS, "TLS handshake: %v", err)
			}
			return authErr(err, "TLS handshake")
		}
		cs := tc.ConnectionState()
		ekm, err := cs.ExportKeyingMaterial(ekmLabel, nil, 32)
		if err != nil {
			return authErr(err, "TLS keying material")
		}
		binding = ekm
	}
	me := hello{role: roleClient, service: svc}
	if server {
		me.role = roleServer
	}
	if _, err := rand.Read(me.nonce[:]); err != nil {
		return authErr(err, "nonce")
	}
	// Strict alternation (client hello, server hello, client proof, server
	// proof) keeps the exchange correct on unbuffered transports too.
	out := me.marshal()
	var in [helloLen]byte
	if !server {
		if _, err := conn.Write(out[:]); err != nil {
			return authErr(err, "send hello")
		}
	}
	if _, err := io.ReadFull(conn, in[:]); err != nil {
		return authErr(err, "read hello")
	}
	peer, err := parseHello(in[:])
	if err != nil {
		return authErr(nil, "%v", err)
	}
	if peer.role == me.role {
		return authErr(nil, "peer claims the same role as this side")
	}
	if server {
		// Sent also to a client of another service, so that it learns
		// which service it reached.
		if _, err := conn.Write(out[:]); err != nil {
			return authErr(err, "send hello")
		}
	}
	if peer.service != svc {
		if server {
			return errs.New("Handshake", errs.NoPE, errs.NoPE, otherService,
				"a client of goshmem's %v reached this %v", peer.service, svc)
		}
		return errs.New("Handshake", errs.NoPE, errs.NoPE, otherService,
			"this %v client reached goshmem's %v, not the %v", svc, peer.service, svc)
	}
	client, srv := &me.nonce, &peer.nonce
	if server {
		client, srv = &peer.nonce, &me.nonce
	}
	var got [proofLen]byte
	if server {
		if _, err := io.ReadFull(conn, got[:]); err != nil {
			return authErr(err, "read client proof")
		}
		if !hmac.Equal(got[:], proof(secret, roleClient, svc, client, srv, binding)) {
			// Said in so many words, so that the client can tell this
			// refusal from a connection cut for other reasons (a
			// listener shedding connections under a flood, a peer's
			// death), which it may retry.
			_, _ = conn.Write(refusal[:])
			return authErr(nil, "client does not know the job secret")
		}
		if verified != nil {
			verified()
		}
		if _, err := conn.Write(proof(secret, roleServer, svc, client, srv, binding)); err != nil {
			return authErr(err, "send server proof")
		}
		return nil
	}
	if _, err := conn.Write(proof(secret, roleClient, svc, client, srv, binding)); err != nil {
		return authErr(err, "send client proof")
	}
	if _, err := io.ReadFull(conn, got[:]); err != nil {
		return authErr(err, "read server proof")
	}
	if got == refusal {
		return errs.New("Handshake", errs.NoPE, errs.NoPE, errRefused,
			"the server refused this side's proof: it holds another job secret")
	}
	if !hmac.Equal(got[:], proof(secret, roleServer, svc, client, srv, binding)) {
		return authErr(nil, "server does not know the job secret")
	}
	return nil
}

// refusal is what a server writes instead of its proof to a client whose
// proof is wrong: a client reads it where the proof goes. It reveals only
// what the close after it would: that the proof was wrong.
var refusal = [proofLen]byte([]byte("goshmem: the job secret differs\n"))

// ErrRefused marks a handshake whose server said it refused this side's
// proof (another job secret), as opposed to one whose connection was cut
// (a peer that died, a listener that shed the connection under load),
// which a client may retry. It comes wrapped with errs.ErrTLS.
var ErrRefused = errors.New("the peer refused this side's job secret")

var errRefused = fmt.Errorf("%w: %w", errs.ErrTLS, ErrRefused)

// timeoutTLS wraps both ErrTimeout and ErrTLS.
var timeoutTLS = fmt.Errorf("%w (%w)", errs.ErrTimeout, errs.ErrTLS)

// ErrNotTLS marks a TLS handshake whose peer sent something other than TLS
// (a peer with TLS off): a listener may tell such a peer so in plaintext,
// which it can read. It comes wrapped with errs.ErrTLS.
var ErrNotTLS = errors.New("the peer does not speak TLS")

var errNotTLS = fmt.Errorf("%w: %w", errs.ErrTLS, ErrNotTLS)

func authErr(cause error, detail string, args ...any) error {
	if len(args) > 0 {
		detail = fmt.Sprintf(detail, args...)
	}
	sentinel := errs.ErrTLS
	if cause != nil {
		detail += ": " + cause.Error()
		var ne net.Error
		if errors.Is(cause, os.ErrDeadlineExceeded) || (errors.As(cause, &ne) && ne.Timeout()) {
			sentinel = timeoutTLS
		}
	}
	return errs.New("Handshake", errs.NoPE, errs.NoPE, sentinel, "%s", detail)
}
