package membership

import (
	"bytes"
	"errors"
	"testing"
)

func sampleMsg() msg {
	m := msg{Kind: kindReport, Seq: 1<<40 + 7, From: "gsm-0123456789abcdef", Addr: "127.0.0.1:7946"}
	for i := range m.Hash {
		m.Hash[i] = byte(255 - i)
	}
	return m
}

func TestMsgRoundTrip(t *testing.T) {
	seal := sampleMsg()
	seal.Kind, seal.Addr = kindSeal, "[::1]:65535"
	for _, m := range []msg{sampleMsg(), seal, {Kind: kindSeal, From: "x"}, {Kind: kindLeaving, From: "y", Seq: 9}} {
		b := m.encode(nil)
		got, err := decodeMsg(b)
		if err != nil {
			t.Fatal(err)
		}
		if got != m {
			t.Fatalf("round trip: got %+v, want %+v", got, m)
		}
	}
}

func TestMsgRejects(t *testing.T) {
	good := sampleMsg()
	enc := good.encode(nil)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), enc...)) }
	nameAt := 45
	for name, b := range map[string][]byte{
		"empty":         nil,
		"not ours":      []byte("hello, memberlist user"),
		"format":        mut(func(b []byte) []byte { b[3] = 2; return b }),
		"kind zero":     mut(func(b []byte) []byte { b[4] = 0; return b }),
		"kind unknown":  mut(func(b []byte) []byte { b[4] = 4; return b }),
		"no name":       (&msg{Kind: kindReport}).encode(nil),
		"name too long": mut(func(b []byte) []byte { b[nameAt] = maxIDLen + 1; return b }),
		"name cut":      enc[:nameAt+3],
		"addr cut":      enc[:len(enc)-1],
		"junk after":    append(append([]byte(nil), enc...), 0),
		"too long":      append(append([]byte(nil), enc...), make([]byte, msgMax)...),
	} {
		if _, err := decodeMsg(b); !errors.Is(err, errBadMsg) {
			t.Errorf("%s: got %v, want errBadMsg", name, err)
		}
	}
}

// FuzzDecodeMsg feeds arbitrary bytes, as any holder of the job key can
// send, to the sealing message decoder: it must not panic, and what it
// accepts re-encodes to the same bytes.
func FuzzDecodeMsg(f *testing.F) {
	m := sampleMsg()
	f.Add(m.encode(nil))
	m.Kind = kindSeal
	f.Add(m.encode(nil))
	m.Kind = kindLeaving
	f.Add(m.encode(nil))
	f.Add([]byte("gsm\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMsg(b)
		if err != nil {
			return
		}
		if again := m.encode(nil); !bytes.Equal(again, b) {
			t.Fatalf("accepted %x but re-encodes to %x", b, again)
		}
	})
}
