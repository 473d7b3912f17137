package main

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/goshmem/shmem/internal/sealed"
	"github.com/goshmem/shmem/transport/rdma"
)

// tlsCeiling measures tls_bw_ceiling, the reference of the TLS bandwidth
// goal: the most a 1 MiB put+quiet under TLS could reach between these two
// processes when each byte must be sealed by one core and opened by the
// other. Per iteration PE 0 seals 1 MiB with crypto/cipher's AES-128-GCM
// in records of sealed.MaxRecord bytes (the 4-byte length as additional
// data, as goshmem's records), writes them sealed.FlushAt bytes at a time
// on a plain TCP loopback connection, and waits for an 8-byte answer; PE 1
// reads the records into one buffer, opens each in place, and answers
// once the whole MiB has authenticated. Both ends' reads poll as goshmem's
// lanes do (rdma.PollingConn, as tcp_rtt_poll). No goshmem code is on the
// data path, and PE 1 copies nothing out: goshmem's receiver must also
// copy the opened bytes into the heap (it may not open there), so its put
// cannot reach this figure; it is what the two cores' AES-GCM and kernel
// copies allow. Timed like put's 1 MiB row (OSU's counts), so the two
// bandwidths compare directly.
func (r *runner) tlsCeiling() error {
	poll, err := busyPoll()
	if err != nil {
		return err
	}
	aead, err := ceilingAEAD()
	if err != nil {
		return err
	}
	const size = 1 << 20
	skip, iters := r.p2pCounts(size)
	return r.rawPair(func(raw net.Conn) error {
		c := rdma.PollingConn(raw, poll)
		if r.me == 1 {
			if err := openRecords(c, aead, size, skip+iters); err != nil {
				return fmt.Errorf("opening PE 0's records: %w", err)
			}
			return nil
		}
		s := newRecordSealer(c, aead)
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(i)
		}
		var ack [8]byte
		lat, allocs, err := r.timeLoop(skip, iters, func(int) error {
			if err := s.send(src); err != nil {
				return err
			}
			_, err := io.ReadFull(c, ack[:])
			return err
		}, nil)
		if err != nil {
			return err
		}
		r.row("tls_bw_ceiling", size, iters, lat, size/lat, allocs)
		return nil
	})
}

// ceilingAEAD is AES-128-GCM under a fixed key: the key's value does not
// change the cost, and both ends must agree on it.
func ceilingAEAD() (cipher.AEAD, error) {
	block, err := aes.NewCipher(make([]byte, 16))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

const recHdr = 4 // a record's plaintext length, little-endian

// recordNonce sets n to the nonce of record seq: the number in the last
// eight bytes (a fixed IV of zeros).
func recordNonce(n *[12]byte, seq uint64) {
	binary.BigEndian.PutUint64(n[4:], seq)
}

// recordSealer seals and writes records on one connection.
type recordSealer struct {
	c     net.Conn
	aead  cipher.AEAD
	out   []byte
	seq   uint64
	nonce [12]byte
}

func newRecordSealer(c net.Conn, aead cipher.AEAD) *recordSealer {
	return &recordSealer{c: c, aead: aead,
		out: make([]byte, 0, sealed.FlushAt+sealed.MaxRecord+2*(recHdr+aead.Overhead()))}
}

// send seals p in records of at most sealed.MaxRecord bytes, straight into
// the write buffer, and writes every sealed.FlushAt bytes of them.
func (s *recordSealer) send(p []byte) error {
	for len(p) > 0 {
		k := min(len(p), sealed.MaxRecord)
		recordNonce(&s.nonce, s.seq)
		s.seq++
		o := len(s.out)
		s.out = binary.LittleEndian.AppendUint32(s.out, uint32(k))
		s.out = s.aead.Seal(s.out, s.nonce[:], p[:k], s.out[o:o+recHdr])
		p = p[k:]
		if len(s.out) >= sealed.FlushAt || len(p) == 0 {
			if _, err := s.c.Write(s.out); err != nil {
				return err
			}
			s.out = s.out[:0]
		}
	}
	return nil
}

var errCeilingRecord = errors.New("record length out of range")

// openRecords reads rounds messages of size plaintext bytes from c, each
// in records as recordSealer writes them, opens every record in place in
// one read buffer, and answers each message with 8 bytes once it has all
// authenticated.
func openRecords(c net.Conn, aead cipher.AEAD, size, rounds int) error {
	tag := aead.Overhead()
	in := make([]byte, 2*(recHdr+sealed.MaxRecord+tag))
	rd, wr := 0, 0
	var seq uint64
	var nonce [12]byte
	var ack [8]byte
	// need reads until in[rd:wr] holds n bytes.
	need := func(n int) error {
		for wr-rd < n {
			if rd+n > len(in) {
				wr = copy(in, in[rd:wr])
				rd = 0
			}
			k, err := c.Read(in[wr:])
			wr += k
			if err != nil && wr-rd < n {
				return err
			}
		}
		return nil
	}
	for round := 0; round < rounds; round++ {
		for got := 0; got < size; {
			if err := need(recHdr); err != nil {
				return err
			}
			n := int(binary.LittleEndian.Uint32(in[rd:]))
			if n < 1 || n > sealed.MaxRecord {
				return fmt.Errorf("%w: %d bytes", errCeilingRecord, n)
			}
			if err := need(recHdr + n + tag); err != nil {
				return err
			}
			rec := in[rd : rd+recHdr+n+tag]
			recordNonce(&nonce, seq)
			seq++
			if _, err := aead.Open(rec[recHdr:recHdr], nonce[:], rec[recHdr:], rec[:recHdr]); err != nil {
				return err
			}
			rd += len(rec)
			if rd == wr {
				rd, wr = 0, 0
			}
			got += n
		}
		if _, err := c.Write(ack[:]); err != nil {
			return err
		}
	}
	return nil
}
