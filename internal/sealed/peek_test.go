package sealed

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestPeekAcrossRecords: a stream written as records of 1 to 9 bytes is
// read back by Peek, Discard, ReadFull and Read mixed, every byte in
// order, headers straddling records included.
func TestPeekAcrossRecords(t *testing.T) {
	var wire bytes.Buffer
	send, recv := pair(t, &wire, &wire)
	want := pattern(3000, 11)
	for i, k := 0, 1; i < len(want); k = k%9 + 1 {
		k = min(k, len(want)-i)
		if _, err := send.Write(want[i : i+k]); err != nil {
			t.Fatal(err)
		}
		i += k
	}
	var got []byte
	for step := 0; len(got) < len(want); step++ {
		left := len(want) - len(got)
		n := min(1+step%PeekMax, left)
		switch step % 4 {
		case 0: // peek, then discard what was seen
			b, err := recv.Peek(n)
			if err != nil {
				t.Fatalf("step %d: Peek(%d): %v", step, n, err)
			}
			got = append(got, b...)
			if d, err := recv.Discard(n); d != n || err != nil {
				t.Fatalf("step %d: Discard(%d) = %d, %v", step, n, d, err)
			}
		case 1:
			b := make([]byte, n)
			if err := recv.ReadFull(b); err != nil {
				t.Fatalf("step %d: ReadFull(%d): %v", step, n, err)
			}
			got = append(got, b...)
		case 2: // peek, then read the peeked bytes with Read
			if _, err := recv.Peek(n); err != nil {
				t.Fatalf("step %d: Peek(%d): %v", step, n, err)
			}
			b := make([]byte, n)
			k, err := recv.Read(b)
			if err != nil || k == 0 {
				t.Fatalf("step %d: Read after Peek = %d, %v", step, k, err)
			}
			got = append(got, b[:k]...)
		case 3:
			b := make([]byte, 1)
			if _, err := recv.Peek(n); err != nil {
				t.Fatalf("step %d: Peek(%d): %v", step, n, err)
			}
			if err := recv.ReadFull(b); err != nil {
				t.Fatal(err)
			}
			got = append(got, b...)
		}
		if !bytes.Equal(got, want[:len(got)]) {
			t.Fatalf("step %d: stream differs at byte %d", step, len(got))
		}
	}
	if recv.Buffered() != 0 {
		t.Fatalf("%d bytes buffered after the whole stream", recv.Buffered())
	}
	if _, err := recv.Peek(1); err != io.EOF {
		t.Fatalf("Peek at the stream's end: %v, want io.EOF", err)
	}
}

// TestPeekCutStream: a stream that ends inside what Peek or ReadFull asked
// for reads as io.ErrUnexpectedEOF; a Peek over PeekMax is refused.
func TestPeekCutStream(t *testing.T) {
	var wire bytes.Buffer
	send, recv := pair(t, &wire, &wire)
	send.Write([]byte("abc"))
	send.Write([]byte("de"))
	if _, err := recv.Peek(PeekMax + 1); err == nil {
		t.Fatal("Peek over PeekMax accepted")
	}
	if _, err := recv.Peek(8); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Peek past the end: %v, want io.ErrUnexpectedEOF", err)
	}
	var wire2 bytes.Buffer
	send2, recv2 := pair(t, &wire2, &wire2)
	send2.Write([]byte("abc"))
	if err := recv2.ReadFull(make([]byte, 8)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ReadFull past the end: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestPeekOfATamperedRecordFails: Peek opens records like Read, so an
// altered record fails authentication and nothing of it is returned.
func TestPeekOfATamperedRecordFails(t *testing.T) {
	var wire, rx bytes.Buffer
	send, recv := pair(t, &wire, &rx)
	send.Write(pattern(40, 1))
	b := wire.Bytes()
	b[hdrLen+3] ^= 1
	rx.Write(b)
	if got, err := recv.Peek(8); !errors.Is(err, ErrAuth) || got != nil {
		t.Fatalf("Peek of a forged record: %x, %v, want nothing and ErrAuth", got, err)
	}
}
