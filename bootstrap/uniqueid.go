package bootstrap

import (
	"crypto/rand"
	"encoding/base64"
	"strings"

	"github.com/goshmem/shmem/internal/errs"
)

// UniqueIDVersion is the only UniqueID encoding this package writes and
// reads. A new layout gets a new number so old binaries refuse it loudly.
const UniqueIDVersion = 1

// uidPrefix starts every UniqueID token. The version digit in it lets a human
// tell layouts apart; the binary version byte is what the parser trusts.
const uidPrefix = "gsu1."

// Binary layout after base64url decoding:
//
//	version  1 byte
//	flags    1 byte  (bit 0: TLS; other bits must be zero)
//	secret  32 bytes
//	pin     32 bytes
//	addrLen  1 byte  (1..255)
//	addr     addrLen bytes
const (
	uidFixedLen  = 1 + 1 + 32 + 32 + 1
	uidMaxBinLen = uidFixedLen + maxHostPortLen
	flagTLS      = 1 << 0
)

// maxUniqueIDLen is the longest token ParseUniqueID will look at; anything
// longer is refused before decoding.
var maxUniqueIDLen = len(uidPrefix) + base64.RawURLEncoding.EncodedLen(uidMaxBinLen)

// uidEncoding rejects non-zero padding bits so that each ID has exactly one
// spelling and String(ParseUniqueID(s)) == s.
var uidEncoding = base64.RawURLEncoding.Strict()

// UniqueID names one job's rendezvous: CANN SHMEM's aclshmemx_uniqueid_t.
// PE 0 creates it (NewUniqueID), hands String() to every PE by any means,
// and each PE passes it with its rank and the PE count to shmem.Init.
// It is comparable with ==.
type UniqueID struct {
	// Version is UniqueIDVersion for every ID this package makes or accepts.
	Version uint8
	// Addr is host:port of the rank-0 rendezvous listener: an IP literal
	// (IPv6 in brackets, zone allowed) or a DNS name, port 1..65535.
	Addr string
	// Secret is the job secret every PE proves it knows at rendezvous;
	// 32 random bytes from crypto/rand, never all zero.
	Secret [32]byte
	// Pin is the SHA-256 of the rendezvous server's DER certificate when TLS
	// is on, so PEs can trust a self-signed certificate; all zero when off.
	Pin [32]byte
	// TLS says whether the rendezvous connection uses TLS.
	TLS bool
}

// NewUniqueID returns a fresh ID for the listener at addr (host:port, port
// 1..65535) with a newly generated secret. pin must be non-zero exactly when
// tls is set.
func NewUniqueID(addr string, tls bool, pin [32]byte) (UniqueID, error) {
	u := UniqueID{Version: UniqueIDVersion, Addr: addr, Pin: pin, TLS: tls}
	// rand.Read never fails on supported platforms (it aborts the program
	// instead), so the error is not worth a branch the tests cannot reach.
	_, _ = rand.Read(u.Secret[:])
	if err := u.check("NewUniqueID"); err != nil {
		return UniqueID{}, err
	}
	return u, nil
}

// Validate reports, wrapping errs.ErrInvalidArgument, the first field that
// ParseUniqueID would refuse.
func (u UniqueID) Validate() error { return u.check("UniqueID.Validate") }

func (u UniqueID) check(op string) error {
	bad := func(format string, args ...any) error {
		return errs.New(op, errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	if u.Version != UniqueIDVersion {
		return bad("unique ID version %d, want %d", u.Version, UniqueIDVersion)
	}
	if _, err := parseHostPort(u.Addr, false); err != nil {
		return bad("unique ID %v", err)
	}
	if u.Secret == ([32]byte{}) {
		return bad("unique ID secret is all zero")
	}
	if u.TLS && u.Pin == ([32]byte{}) {
		return bad("unique ID has TLS on but no certificate pin")
	}
	if !u.TLS && u.Pin != ([32]byte{}) {
		return bad("unique ID has a certificate pin but TLS off")
	}
	return nil
}

// String encodes u as one printable token, "gsu1." followed by base64url
// without padding: safe in environment variables, command lines and file
// names. ParseUniqueID(u.String()) returns u for every u that Validate
// accepts; the token of an invalid u does not parse.
func (u UniqueID) String() string {
	addr := u.Addr
	if len(addr) > maxHostPortLen {
		addr = "" // an empty address never parses, so the token stays invalid
	}
	b := make([]byte, 0, uidFixedLen+len(addr))
	b = append(b, u.Version, 0)
	if u.TLS {
		b[1] = flagTLS
	}
	b = append(b, u.Secret[:]...)
	b = append(b, u.Pin[:]...)
	b = append(b, byte(len(addr)))
	b = append(b, addr...)
	return uidPrefix + uidEncoding.EncodeToString(b)
}

// ParseUniqueID decodes a token made by String. It is strict: wrong prefix,
// length, version, flags, an all-zero secret, a pin that disagrees with the
// TLS flag, trailing bytes, or an address that is not host:port with port
// 1..65535 are all errors wrapping errs.ErrInvalidArgument.
func ParseUniqueID(s string) (UniqueID, error) {
	bad := func(format string, args ...any) (UniqueID, error) {
		return UniqueID{}, errs.New("ParseUniqueID", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	if len(s) > maxUniqueIDLen {
		return bad("unique ID is %d characters, longer than %d", len(s), maxUniqueIDLen)
	}
	if !strings.HasPrefix(s, uidPrefix) {
		return bad("unique ID does not start with %q", uidPrefix)
	}
	body := s[len(uidPrefix):]
	// The decoder skips \r and \n; refusing them keeps one spelling per ID.
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return bad("unique ID holds %q at offset %d, outside base64url", c, len(uidPrefix)+i)
		}
	}
	b, err := uidEncoding.DecodeString(body)
	if err != nil {
		return bad("unique ID is not base64url: %v", err)
	}
	if len(b) < uidFixedLen {
		return bad("unique ID is %d bytes, shorter than %d", len(b), uidFixedLen)
	}
	var u UniqueID
	u.Version = b[0]
	if u.Version != UniqueIDVersion {
		return bad("unique ID version %d, want %d", u.Version, UniqueIDVersion)
	}
	if b[1]&^flagTLS != 0 {
		return bad("unique ID has unknown flags %#x", b[1])
	}
	u.TLS = b[1]&flagTLS != 0
	copy(u.Secret[:], b[2:34])
	copy(u.Pin[:], b[34:66])
	n := int(b[66])
	if rest := len(b) - uidFixedLen; rest != n {
		return bad("unique ID address length %d but %d bytes follow", n, rest)
	}
	u.Addr = string(b[uidFixedLen:])
	if err := u.check("ParseUniqueID"); err != nil {
		return UniqueID{}, err
	}
	return u, nil
}
