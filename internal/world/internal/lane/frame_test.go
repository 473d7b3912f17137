package lane

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/goshmem/shmem/actors"
)

func sampleFrames(t testing.TB) [][]byte {
	msg, err := encodeMessage(3, 1, "pe-1", "future$abc", &actors.PEFailed{Rank: 2, Reason: "gone", Origin: 3})
	if err != nil {
		t.Fatal(err)
	}
	noReply, err := encodeMessage(0, 5, "coordinator", "", &actors.GlobalExit{Rank: 0, Status: 2})
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		msg, noReply,
		appendFrame(nil, &frame{kind: kindHello, from: 7, to: 0}),
		appendFrame(nil, &frame{kind: kindHeartbeat}),
		appendFrame(nil, &frame{kind: kindBye}),
		appendFrame(nil, &frame{kind: kindProbe, subject: 4, round: 2}),
		appendFrame(nil, &frame{kind: kindProbeAck, subject: 4, round: 2, age: 250}),
		appendFrame(nil, &frame{kind: kindProbeAck, subject: 1, round: 9, age: noAge}),
	}
}

// TestFrameRoundTrip: every frame kind reads back as written.
func TestFrameRoundTrip(t *testing.T) {
	want := []frame{
		{kind: kindMessage, from: 3, to: 1, target: "pe-1", reply: "future$abc"},
		{kind: kindMessage, from: 0, to: 5, target: "coordinator"},
		{kind: kindHello, from: 7, to: 0},
		{kind: kindHeartbeat},
		{kind: kindBye},
		{kind: kindProbe, subject: 4, round: 2},
		{kind: kindProbeAck, subject: 4, round: 2, age: 250},
		{kind: kindProbeAck, subject: 1, round: 9, age: noAge},
	}
	for i, b := range sampleFrames(t) {
		f, err := readFrame(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		payload := f.payload
		f.payload = nil
		if !reflect.DeepEqual(*f, want[i]) {
			t.Errorf("frame %d: got %+v, want %+v", i, *f, want[i])
		}
		if f.kind == kindMessage {
			if _, err := actors.Decode(payload); err != nil {
				t.Errorf("frame %d: payload: %v", i, err)
			}
		}
	}
}

// TestFrameRefusesHostileInput: lengths beyond the limit are refused
// before anything is allocated for them; malformed bodies are refused
// with errFrame.
func TestFrameRefusesHostileInput(t *testing.T) {
	huge := binary.BigEndian.AppendUint32(nil, 0xffffffff)
	if _, err := readFrame(bytes.NewReader(append(huge, kindMessage))); !errors.Is(err, errFrame) {
		t.Errorf("4 GiB length: err = %v, want errFrame", err)
	}
	zero := binary.BigEndian.AppendUint32(nil, 0)
	if _, err := readFrame(bytes.NewReader(zero)); !errors.Is(err, errFrame) {
		t.Errorf("empty frame: err = %v, want errFrame", err)
	}
	for name, body := range map[string][]byte{
		"unknown kind":        {99},
		"heartbeat with body": {kindHeartbeat, 0},
		"short ranks":         {kindHello, 0, 0, 0},
		"hello trailing":      {kindHello, 0, 0, 0, 1, 0, 0, 0, 0, 9},
		"rank out of range":   {kindHello, 0xff, 0, 0, 0, 0, 0, 0, 0},
		"target too long":     append([]byte{kindMessage, 0, 0, 0, 1, 0, 0, 0, 0, 200}, bytes.Repeat([]byte{'a'}, 200)...),
		"target past end":     {kindMessage, 0, 0, 0, 1, 0, 0, 0, 0, 5, 'a'},
		"empty target":        {kindMessage, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1},
		"control char":        {kindMessage, 0, 0, 0, 1, 0, 0, 0, 0, 1, '\n', 0, 1},
		"no payload":          {kindMessage, 0, 0, 0, 1, 0, 0, 0, 0, 1, 'a', 0},
		"probe short":         {kindProbe, probeVersion, 0, 0, 0, 1, 0, 0, 0},
		"probe trailing":      {kindProbe, probeVersion, 0, 0, 0, 1, 0, 0, 0, 2, 0},
		"probe version 2":     {kindProbe, 2, 0, 0, 0, 1, 0, 0, 0, 2},
		"probe subject range": {kindProbe, probeVersion, 0xff, 0, 0, 0, 0, 0, 0, 2},
		"ack without age":     {kindProbeAck, probeVersion, 0, 0, 0, 1, 0, 0, 0, 2},
	} {
		if _, err := decodeFrame(body); !errors.Is(err, errFrame) {
			t.Errorf("%s: err = %v, want errFrame", name, err)
		}
	}
	if _, err := encodeMessage(0, 1, "bad name", "", &actors.GlobalExit{}); !errors.Is(err, errFrame) {
		t.Errorf("encoding to a bad actor name: err = %v", err)
	}
}

// FuzzDecodeFrame: no input makes decodeFrame panic; an accepted frame
// re-encodes to the same bytes, and a message payload is refused or
// decoded by actors.Decode without panicking.
func FuzzDecodeFrame(f *testing.F) {
	for _, b := range sampleFrames(f) {
		f.Add(b[4:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := decodeFrame(b)
		if err != nil {
			if !errors.Is(err, errFrame) {
				t.Fatalf("error %v does not wrap errFrame", err)
			}
			return
		}
		if again := appendFrame(nil, fr)[4:]; !bytes.Equal(again, b) {
			t.Fatalf("re-encoded %x as %x", b, again)
		}
		if fr.kind == kindMessage {
			_, _ = actors.Decode(fr.payload)
		}
	})
}
