package sealed

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

func TestRoundTripSizes(t *testing.T) {
	for _, n := range []int{1, 55, MaxRecord - 1, MaxRecord, MaxRecord + 1, 4*MaxRecord + 3} {
		var wire bytes.Buffer
		send, recv := pair(t, &wire, &wire)
		src := pattern(n, byte(n))
		if k, err := send.Write(src); err != nil || k != n {
			t.Fatalf("%d: Write = %d, %v", n, k, err)
		}
		records := (n + MaxRecord - 1) / MaxRecord
		if wire.Len() != n+records*overhead {
			t.Fatalf("%d bytes: %d on the wire, want %d (%d records)", n, wire.Len(), n+records*overhead, records)
		}
		dst := make([]byte, n)
		if _, err := io.ReadFull(recv, dst); err != nil || !bytes.Equal(dst, src) {
			t.Fatalf("%d bytes: read back %v, equal %v", n, err, bytes.Equal(dst, src))
		}
	}
}

func TestHoldGathersUntilRelease(t *testing.T) {
	var wire bytes.Buffer
	send, recv := pair(t, &wire, &wire)
	send.Hold()
	send.Write([]byte("header"))
	send.Write([]byte("small payload"))
	if wire.Len() != 0 {
		t.Fatalf("%d bytes left while held", wire.Len())
	}
	if err := send.Release(nil); err != nil {
		t.Fatal(err)
	}
	if want := 6 + 13 + 2*overhead; wire.Len() != want {
		t.Fatalf("after Release %d bytes on the wire, want %d", wire.Len(), want)
	}
	got := make([]byte, 3)
	recv.Read(got)
	if want := 3 + 13 + overhead; recv.Buffered() != want {
		t.Fatalf("Buffered = %d after reading 3 bytes, want %d (the rest of the first record and the second)", recv.Buffered(), want)
	}
	rest, _ := io.ReadAll(io.LimitReader(recv, 16))
	if string(got)+string(rest) != "headersmall payload" || recv.Buffered() != 0 {
		t.Fatalf("read %q, %d bytes left buffered", string(got)+string(rest), recv.Buffered())
	}
	// FlushAt bytes leave even while held, so a long frame streams.
	wire.Reset()
	send.Hold()
	send.Write(make([]byte, FlushAt))
	if want := FlushAt + FlushAt/MaxRecord*overhead; wire.Len() != want {
		t.Fatalf("held %d bytes: %d on the wire, want all %d", FlushAt, wire.Len(), want)
	}
	if err := send.Release(errors.New("earlier")); err == nil || err.Error() != "earlier" {
		t.Fatalf("Release kept %v, want the caller's earlier error", err)
	}
}

// twoRecords returns the wire bytes of two records and their plaintexts.
func twoRecords(t *testing.T) (wire []byte, p1, p2 []byte) {
	var b bytes.Buffer
	send, _ := pair(t, &b, &bytes.Buffer{})
	p1, p2 = pattern(300, 1), pattern(200, 2)
	send.Write(p1)
	send.Write(p2)
	return b.Bytes(), p1, p2
}

// TestTamperedRecordNeverReachesTheCaller flips every byte of the second
// record in turn: the first record still reads, the second fails, and the
// caller's buffer receives none of it.
func TestTamperedRecordNeverReachesTheCaller(t *testing.T) {
	wire, p1, _ := twoRecords(t)
	first := overhead + len(p1)
	for i := first; i < len(wire); i++ {
		bad := bytes.Clone(wire)
		bad[i] ^= 0x40
		_, recv := pair(t, &bytes.Buffer{}, bytes.NewBuffer(bad))
		got := make([]byte, len(p1))
		if _, err := io.ReadFull(recv, got); err != nil || !bytes.Equal(got, p1) {
			t.Fatalf("byte %d: first record: %v", i, err)
		}
		dst := make([]byte, 200)
		n, err := recv.Read(dst)
		if err == nil || n != 0 || !bytes.Equal(dst, make([]byte, 200)) {
			t.Fatalf("byte %d flipped: Read = %d, %v; buffer touched %v", i, n, err, !bytes.Equal(dst, make([]byte, 200)))
		}
		if !errors.Is(err, ErrAuth) && !errors.Is(err, ErrRecord) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("byte %d flipped: error %v", i, err)
		}
		if _, again := recv.Read(dst); again != err {
			t.Fatalf("byte %d: failure not final: %v then %v", i, err, again)
		}
	}
}

func TestReplayReorderReflectFail(t *testing.T) {
	wire, p1, _ := twoRecords(t)
	r1, r2 := wire[:overhead+len(p1)], wire[overhead+len(p1):]
	cases := map[string][]byte{
		"replayed":  append(bytes.Clone(r1), r1...),
		"reordered": append(bytes.Clone(r2), r1...),
		"dropped":   bytes.Clone(r2),
	}
	for name, stream := range cases {
		_, recv := pair(t, &bytes.Buffer{}, bytes.NewBuffer(stream))
		dst := make([]byte, 1000)
		var err error
		total := 0
		for err == nil {
			var n int
			n, err = recv.Read(dst[total:])
			total += n
		}
		if !errors.Is(err, ErrAuth) {
			t.Errorf("%s: %v, want ErrAuth", name, err)
		}
		if name != "replayed" && total != 0 || name == "replayed" && total != len(p1) {
			t.Errorf("%s: %d bytes delivered", name, total)
		}
	}
	// A record sent back to its sender: the directions' keys differ.
	var b bytes.Buffer
	send, _ := pair(t, &b, &bytes.Buffer{})
	send.Write([]byte("reflect me"))
	self, err := newConn(pipeConn{b: &b}, secretA, secretB, 16, nil) // the sender's own keys
	if err != nil {
		t.Fatal(err)
	}
	if _, err := self.Read(make([]byte, 16)); !errors.Is(err, ErrAuth) {
		t.Errorf("reflected record: %v, want ErrAuth", err)
	}
}

func TestLengthOutOfRangeRefusedBeforeTheBody(t *testing.T) {
	for _, n := range []uint32{0, MaxRecord + 1, 1 << 31, ^uint32(0)} {
		var stream bytes.Buffer
		binary.Write(&stream, binary.LittleEndian, n)
		stream.Write(make([]byte, 64))
		_, recv := pair(t, &bytes.Buffer{}, &stream)
		if _, err := recv.Read(make([]byte, 8)); !errors.Is(err, ErrRecord) {
			t.Errorf("length %d: %v, want ErrRecord", n, err)
		}
	}
}

func TestTruncation(t *testing.T) {
	wire, p1, _ := twoRecords(t)
	first := overhead + len(p1)
	for _, cut := range []int{first, first + 1, first + hdrLen, len(wire) - 1} {
		_, recv := pair(t, &bytes.Buffer{}, bytes.NewBuffer(bytes.Clone(wire[:cut])))
		io.ReadFull(recv, make([]byte, len(p1)))
		_, err := recv.Read(make([]byte, 10))
		want := io.ErrUnexpectedEOF
		if cut == first {
			want = io.EOF
		}
		if err != want {
			t.Errorf("cut at %d: %v, want %v", cut, err, want)
		}
	}
}

// TestRekey crosses key updates: both ends move to the next secret at the
// same record, and the old key no longer opens records.
func TestRekey(t *testing.T) {
	var wire bytes.Buffer
	send, recv := pair(t, &wire, &wire)
	send.w.seq, recv.r.seq = RekeyEvery-2, RekeyEvery-2
	oldSecret := send.w.secret
	for i := 0; i < 5; i++ {
		p := pattern(100+i, byte(i))
		send.Write(p)
		got := make([]byte, len(p))
		if _, err := io.ReadFull(recv, got); err != nil || !bytes.Equal(got, p) {
			t.Fatalf("record %d around the key update: %v", i, err)
		}
	}
	if send.w.secret == oldSecret || send.w.secret != recv.r.secret {
		t.Fatal("secrets did not move together")
	}
	// A receiver that stayed on the old key refuses the new records.
	stale, _ := newConn(pipeConn{b: &wire}, secretB, secretA, 16, nil)
	stale.r.seq = send.w.seq
	send.Write([]byte("new key"))
	if _, err := stale.Read(make([]byte, 8)); !errors.Is(err, ErrAuth) {
		t.Fatalf("old key opened a record after the update: %v", err)
	}
}

func TestExhaustedNumbersRefused(t *testing.T) {
	var wire bytes.Buffer
	send, _ := pair(t, &wire, &wire)
	send.w.seq = ^uint64(0)
	if _, err := send.Write([]byte("x")); !errors.Is(err, errExhausted) {
		t.Fatalf("Write at the last number: %v", err)
	}
	if _, err := send.Write([]byte("x")); !errors.Is(err, errExhausted) {
		t.Fatalf("Write after exhaustion: %v", err)
	}
}

// TestSteadyStateAllocatesNothing: sealing, writing, reading and opening
// a 256 KiB frame and a small one allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	var wire bytes.Buffer
	wire.Grow(1 << 20)
	send, recv := pair(t, &wire, &wire)
	big, small := make([]byte, 256<<10), make([]byte, 56)
	dst := make([]byte, len(big))
	allocs := testing.AllocsPerRun(50, func() {
		send.Hold()
		send.Write(small)
		send.Write(big)
		send.Release(nil)
		io.ReadFull(recv, dst[:len(small)])
		io.ReadFull(recv, dst)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
}

func BenchmarkSealOpen256KiB(b *testing.B) {
	var wire bytes.Buffer
	wire.Grow(1 << 20)
	send, recv := pair(b, &wire, &wire)
	src, dst := make([]byte, 256<<10), make([]byte, 256<<10)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		send.Write(src)
		io.ReadFull(recv, dst)
	}
}

// BenchmarkSealOpenFrame is one 56-byte frame header sealed, written,
// read and opened: what TLS adds to each direction of an 8-byte round trip.
func BenchmarkSealOpenFrame(b *testing.B) {
	var wire bytes.Buffer
	wire.Grow(1 << 16)
	send, recv := pair(b, &wire, &wire)
	src, dst := make([]byte, 56), make([]byte, 56)
	b.ReportAllocs()
	for b.Loop() {
		send.Write(src)
		io.ReadFull(recv, dst)
	}
}

// chunkConn reads at most max bytes at a time from b.
type chunkConn struct {
	pipeConn
	max int
}

func (c chunkConn) Read(p []byte) (int, error) { return c.b.Read(p[:min(len(p), c.max)]) }

// TestFramesNeverMoveInTheReadBuffer streams frames as lanes write them (a
// 56-byte header record, then a 256 KiB payload in full records): whatever
// the socket hands each read, every byte arrives, and no record is moved
// inside the read buffer before it is opened (the reads stop where a cut
// record would have to move).
func TestFramesNeverMoveInTheReadBuffer(t *testing.T) {
	var wire bytes.Buffer
	send, _ := pair(t, &wire, &bytes.Buffer{})
	var want []byte
	for i := 0; i < 6; i++ {
		hdr, payload := pattern(56, byte(i)), pattern(FlushAt+i*1000, byte(i+50))
		send.Hold()
		send.Write(hdr)
		send.Write(payload)
		if err := send.Release(nil); err != nil {
			t.Fatal(err)
		}
		want = append(append(want, hdr...), payload...)
	}
	for _, max := range []int{1000, maxWire + 7, 2*maxWire - 3, 1 << 30} {
		recv, err := newConn(chunkConn{pipeConn{b: bytes.NewBuffer(bytes.Clone(wire.Bytes()))}, max}, secretB, secretA, 16, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(recv, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("reads of at most %d bytes: %v, equal %v", max, err, bytes.Equal(got, want))
		}
		if recv.moved != 0 {
			t.Errorf("reads of at most %d bytes: %d bytes moved in the read buffer, want none", max, recv.moved)
		}
		if len(recv.in) != bulkBuffer {
			t.Errorf("after full records the read buffer holds %d bytes, want %d", len(recv.in), bulkBuffer)
		}
	}
}

// TestSmallFramesKeepTheSmallBuffer: a connection that never carries a
// full record (a small lane) keeps its first, smaller read buffer.
func TestSmallFramesKeepTheSmallBuffer(t *testing.T) {
	var wire bytes.Buffer
	send, recv := pair(t, &wire, &wire)
	for _, n := range []int{56, 8 << 10, MaxRecord - 1} {
		src := pattern(n, byte(n))
		send.Write(src)
		got := make([]byte, n)
		if _, err := io.ReadFull(recv, got); err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
	if len(recv.in) != smallBuffer {
		t.Fatalf("read buffer of %d bytes, want %d", len(recv.in), smallBuffer)
	}
}
