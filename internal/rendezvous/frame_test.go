package rendezvous

import (
	"bytes"
	"reflect"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range []frame{
		{kind: kindHello, rank: 3, npes: 8, record: []byte("abc")},
		{kind: kindRecord, rank: 0, npes: 1, record: []byte{}},
		{kind: kindRecord, rank: 65535, npes: 65536, record: bytes.Repeat([]byte{7}, MaxRecord)},
		{kind: kindReject, reason: "no"},
		{kind: kindFailed, rank: 2, npes: 4, reason: "rank 2's connection closed"},
	} {
		got, err := readFrame(bytes.NewReader(appendFrame(nil, f)))
		if err != nil {
			t.Fatalf("%+v: %v", f.kind, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Fatalf("round trip of kind %d changed it", f.kind)
		}
	}
	if r := rejectFrame(string(make([]byte, 5000))); len(r.reason) != maxReason {
		t.Fatalf("reject reason not truncated: %d", len(r.reason))
	}
	if r := failedFrame(1, 2, string(make([]byte, 5000))); len(r.reason) != maxReason {
		t.Fatalf("failed reason not truncated: %d", len(r.reason))
	}
}

func TestTable(t *testing.T) {
	tab := newTable(4)
	for _, bad := range []struct{ rank, npes uint32 }{{4, 4}, {1, 5}, {1 << 31, 4}} {
		if tab.offer(bad.rank, bad.npes, nil) == nil {
			t.Fatalf("offer(%d, %d) accepted", bad.rank, bad.npes)
		}
	}
	if err := tab.offer(2, 4, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if tab.offer(2, 4, []byte("y")) == nil || string(tab.records[2]) != "x" {
		t.Fatal("duplicate rank replaced the first record")
	}
	if got := tab.missing(); !reflect.DeepEqual(got, []int{0, 1, 3}) || tab.full() {
		t.Fatalf("missing = %v", got)
	}
	for _, r := range []uint32{0, 1, 3} {
		tab.offer(r, 4, nil)
	}
	if !tab.full() || tab.missing() != nil {
		t.Fatal("table not full after all ranks")
	}
}

func TestRankList(t *testing.T) {
	if got := rankList([]int{2}); got != "rank 2" {
		t.Fatal(got)
	}
	if got := rankList([]int{2, 5}); got != "ranks 2,5" {
		t.Fatal(got)
	}
	many := make([]int, 40)
	for i := range many {
		many[i] = i
	}
	if got := rankList(many); !bytes.HasSuffix([]byte(got), []byte("31,... (8 more)")) {
		t.Fatal(got)
	}
}

// FuzzReadFrame: no input makes the decoder panic or allocate past its
// bounds, and whatever decodes re-encodes to the bytes it came from.
func FuzzReadFrame(f *testing.F) {
	f.Add(appendFrame(nil, frame{kind: kindHello, rank: 1, npes: 2, record: []byte("r")}))
	f.Add(appendFrame(nil, rejectFrame("why")))
	f.Add(appendFrame(nil, failedFrame(2, 4, "gone")))
	f.Add(appendFrame(nil, frame{kind: kindProbe}))
	f.Add(appendFrame(nil, frame{kind: kindProbeReply, rank: 1, npes: 2, record: make([]byte, probeClockLen)}))
	f.Add(header(kindHello, 0xffffffff))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := readFrame(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(fr.record) > MaxRecord || len(fr.reason) > maxReason {
			t.Fatalf("decoded past bounds: record %d reason %d", len(fr.record), len(fr.reason))
		}
		enc := appendFrame(nil, fr)
		if !bytes.Equal(enc, data[:len(enc)]) {
			t.Fatalf("re-encoding differs")
		}
	})
}
