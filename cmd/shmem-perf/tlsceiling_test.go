package main

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestCeilingRecordsRoundTrip: what recordSealer writes, openRecords opens
// and answers message by message; a flipped byte fails authentication.
func TestCeilingRecordsRoundTrip(t *testing.T) {
	aead, err := ceilingAEAD()
	if err != nil {
		t.Fatal(err)
	}
	const size, rounds = 300 << 10, 3 // not a multiple of the record size
	a, b := net.Pipe()
	defer a.Close()
	done := make(chan error, 1)
	go func() {
		defer b.Close()
		done <- openRecords(b, aead, size, rounds)
	}()
	s := newRecordSealer(a, aead)
	src := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	var ack [8]byte
	for i := 0; i < rounds; i++ {
		if err := s.send(src); err != nil {
			t.Fatalf("round %d: send: %v", i, err)
		}
		if _, err := a.Read(ack[:]); err != nil {
			t.Fatalf("round %d: no answer: %v", i, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("opening: %v", err)
	}

	// A record altered on the way is refused.
	a2, b2 := net.Pipe()
	defer a2.Close()
	go func() {
		defer b2.Close()
		done <- openRecords(b2, aead, 100, 1)
	}()
	s2 := newRecordSealer(&flipConn{Conn: a2}, aead)
	go s2.send(make([]byte, 100))
	if err := <-done; err == nil || errors.Is(err, errCeilingRecord) {
		t.Fatalf("altered record: got %v, want an authentication failure", err)
	}
}

// flipConn flips the last byte of every write (a record's tag).
type flipConn struct{ net.Conn }

func (f *flipConn) Write(p []byte) (int, error) {
	q := append([]byte(nil), p...)
	q[len(q)-1] ^= 1
	return f.Conn.Write(q)
}

// TestCeilingBenchRow: -b tls_bw_ceiling gives PE 0's row for 1 MiB with a
// bandwidth.
func TestCeilingBenchRow(t *testing.T) {
	t.Setenv("SHMEM_UID_SESSION_ID", "")
	var out, errb bytes.Buffer
	if err := run([]string{"-np", "2", "-b", "tls_bw_ceiling", "-csv", "-bind", "none"}, &out, &errb); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errb.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Split(line, ",")
		if len(f) == 7 && f[2] == "tls_bw_ceiling" {
			bw, err := strconv.ParseFloat(f[6], 64)
			if f[3] != "1048576" || f[4] != "100" || err != nil || bw <= 0 {
				t.Fatalf("row %q: want 1 MiB, 100 iterations and a bandwidth", line)
			}
			return
		}
	}
	t.Fatalf("no tls_bw_ceiling row from PE 0:\n%s\nstderr:\n%s", out.String(), errb.String())
}
