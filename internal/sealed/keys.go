package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
)

// ExporterLabel is the TLS exporter label of the record keys; "v1" names
// the record format.
const ExporterLabel = "EXPORTER-goshmem-bulk-v1"

// RekeyEvery is how many records one key seals before both ends move to
// the next (see the package comment).
const RekeyEvery = 1 << 16

const secretLen = 32

// Supported reports whether cs's connection can switch to sealed records:
// TLS 1.3 with an AES-GCM suite (whose key length the records keep). Both
// ends see the same state, so they decide alike.
func Supported(cs *tls.ConnectionState) bool {
	return cs.HandshakeComplete && cs.Version == tls.VersionTLS13 && keyLen(cs.CipherSuite) > 0
}

func keyLen(suite uint16) int {
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256:
		return 16
	case tls.TLS_AES_256_GCM_SHA384:
		return 32
	}
	return 0
}

// secrets exports the two directions' first secrets of cs: the client's
// sending one first.
func secrets(cs *tls.ConnectionState) (c2s, s2c []byte, err error) {
	b, err := cs.ExportKeyingMaterial(ExporterLabel, nil, 2*secretLen)
	if err != nil {
		return nil, nil, err
	}
	return b[:secretLen], b[secretLen:], nil
}

// direction is one direction's key state: its AEAD, IV, current secret
// and the number of the next record.
type direction struct {
	aead   cipher.AEAD
	iv     [12]byte
	ivLo   uint64 // iv's last 8 bytes, big-endian: what the record number XORs
	secret [secretLen]byte
	keyLen int
	seq    uint64
}

var errExhausted = errors.New("sealed: record numbers exhausted")

func (d *direction) init(secret []byte, keyLen int) error {
	copy(d.secret[:], secret)
	d.keyLen = keyLen
	return d.derive()
}

// derive makes the AEAD and IV of the current secret.
func (d *direction) derive() error {
	key, err := hkdf.Expand(sha256.New, d.secret[:], "goshmem bulk key", d.keyLen)
	if err != nil {
		return err
	}
	iv, err := hkdf.Expand(sha256.New, d.secret[:], "goshmem bulk iv", len(d.iv))
	if err != nil {
		return err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	if d.aead, err = cipher.NewGCM(block); err != nil {
		return err
	}
	copy(d.iv[:], iv)
	d.ivLo = binary.BigEndian.Uint64(d.iv[4:])
	return nil
}

// nonce is the current record's nonce: IV XOR the record number.
func (d *direction) nonce(n *[12]byte) {
	*n = d.iv
	binary.BigEndian.PutUint64(n[4:], d.ivLo^d.seq)
}

// advance moves to the next record number, and at every RekeyEvery-th to
// the next secret. It allocates only then (a new AES key schedule).
func (d *direction) advance() error {
	if d.seq == ^uint64(0) {
		return errExhausted
	}
	d.seq++
	if d.seq%RekeyEvery != 0 {
		return nil
	}
	next, err := hkdf.Expand(sha256.New, d.secret[:], "goshmem bulk update", secretLen)
	if err != nil {
		return fmt.Errorf("sealed: key update: %w", err)
	}
	copy(d.secret[:], next)
	return d.derive()
}
