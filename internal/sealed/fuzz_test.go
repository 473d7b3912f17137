package sealed

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// canonical is the plaintext the fuzz corpus's streams were sealed from,
// in records of the lengths listed.
var canonicalLens = []int{1, 56, 300, MaxRecord, 7}

func canonicalStream(tb testing.TB) (wire, plain []byte) {
	var b bytes.Buffer
	send, _ := pair(tb, &b, &bytes.Buffer{})
	for i, n := range canonicalLens {
		p := pattern(n, byte(i))
		send.Write(p)
		plain = append(plain, p...)
	}
	return b.Bytes(), plain
}

// FuzzOpen feeds arbitrary bytes to a reader holding the corpus's keys,
// read with Read, Peek and ReadFull in turn.
// Whatever it returns must be a prefix of the canonical plaintext: only
// the canonical sender can make a record that opens at a given number,
// so any other byte delivered would be a forgery getting through. It must
// not panic, and it must stop with an error.
func FuzzOpen(f *testing.F) {
	wire, _ := canonicalStream(f)
	f.Add(wire)
	f.Add(wire[:len(wire)/2])
	f.Add(wire[:overhead+1])
	f.Add([]byte{})
	bad := bytes.Clone(wire)
	bad[overhead+1+hdrLen] ^= 1
	f.Add(bad)
	huge := binary.LittleEndian.AppendUint32(nil, MaxRecord+1)
	f.Add(append(huge, wire...))
	f.Fuzz(func(t *testing.T, stream []byte) {
		_, plain := canonicalStream(t)
		_, recv := pair(t, &bytes.Buffer{}, bytes.NewBuffer(stream))
		got := make([]byte, 0, len(plain))
		buf := make([]byte, 777)
		var err error
		for i := range 1 + len(stream) {
			// Read, Peek with Discard, and ReadFull in turn: frames are
			// read all three ways.
			var n int
			switch i % 3 {
			case 0:
				n, err = recv.Read(buf)
				got = append(got, buf[:n]...)
			case 1:
				var b []byte
				if b, err = recv.Peek(1 + i%PeekMax); err == nil {
					got = append(got, b...)
					_, err = recv.Discard(len(b))
				}
			case 2:
				if err = recv.ReadFull(buf[:1+i%len(buf)]); err == nil {
					got = append(got, buf[:1+i%len(buf)]...)
				}
			}
			if err != nil {
				break
			}
		}
		if err == nil {
			t.Fatalf("a %d-byte stream never ended the reads", len(stream))
		}
		if !bytes.HasPrefix(plain, got) {
			t.Fatalf("delivered %d bytes that are not the sealed plaintext", len(got))
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrAuth) && !errors.Is(err, ErrRecord) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}
