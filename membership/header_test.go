package membership

import (
	"bytes"
	"errors"
	"testing"
)

func sampleHeader() header {
	h := header{Sealed: true, Hint: 3, NPEs: 16, Incarnation: 1234567890123, JobID: "job-7", Version: "v1.2",
		Meta: []byte("ctl=127.0.0.1:4000 data=127.0.0.1:4001")}
	for i := range h.Hash {
		h.Hash[i] = byte(i * 7)
	}
	return h
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []header{sampleHeader(), {Hint: noHint, NPEs: 1, JobID: "j"}, {Leaving: true, Hint: 0, NPEs: 2, JobID: "j"}} {
		b := h.encode(nil)
		if len(b) != h.size() {
			t.Fatalf("encoded %d bytes, size() says %d", len(b), h.size())
		}
		got, err := decodeHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Sealed != h.Sealed || got.Leaving != h.Leaving || got.Hint != h.Hint || got.NPEs != h.NPEs || got.Incarnation != h.Incarnation ||
			got.Hash != h.Hash || got.JobID != h.JobID || got.Version != h.Version || !bytes.Equal(got.Meta, h.Meta) {
			t.Fatalf("round trip: got %+v, want %+v", got, h)
		}
		// The decoded record must not alias the network buffer.
		if len(got.Meta) > 0 {
			b[len(b)-1] ^= 0xFF
			if got.Meta[len(got.Meta)-1] != h.Meta[len(h.Meta)-1] {
				t.Fatal("decoded Meta aliases the input")
			}
		}
	}
}

func TestHeaderRejects(t *testing.T) {
	good := sampleHeader()
	enc := good.encode(nil)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), enc...)) }
	for name, b := range map[string][]byte{
		"empty":        nil,
		"not ours":     []byte("consul-server-meta"),
		"format":       mut(func(b []byte) []byte { b[3] = 9; return b }),
		"flags":        mut(func(b []byte) []byte { b[4] = 0x80; return b }),
		"npes zero":    mut(func(b []byte) []byte { b[9], b[10], b[11], b[12] = 0, 0, 0, 0; return b }),
		"npes huge":    mut(func(b []byte) []byte { b[12] = 0xFF; return b }),
		"hint >= npes": mut(func(b []byte) []byte { b[5] = 16; return b }),
		"job too long": mut(func(b []byte) []byte { b[53] = maxIDLen + 1; return b }),
		"job cut":      enc[:53+3],
		"version cut":  enc[:53+1+len(good.JobID)+2],
		"too long":     append(append([]byte(nil), enc...), make([]byte, metaMaxSize)...),
	} {
		if _, err := decodeHeader(b); !errors.Is(err, errBadHeader) {
			t.Errorf("%s: got %v, want errBadHeader", name, err)
		}
	}
}

// FuzzDecodeHeader feeds arbitrary metadata, as any host on the network can
// send, to the decoder: it must not panic, and what it accepts re-encodes to
// the same bytes.
func FuzzDecodeHeader(f *testing.F) {
	h := sampleHeader()
	f.Add(h.encode(nil))
	f.Add((&header{Hint: noHint, NPEs: 1, JobID: "j"}).encode(nil))
	f.Add([]byte("gsm\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHeader(b)
		if err != nil {
			return
		}
		if again := h.encode(nil); !bytes.Equal(again, b) {
			t.Fatalf("accepted %x but re-encodes to %x", b, again)
		}
	})
}
