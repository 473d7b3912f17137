package fabric

import (
	"bytes"
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func sampleAddress() Address {
	return Address{Rank: 3, Provider: "tcp;ofi_rxm", HeapBase: 0x7f0000000000, HeapSize: 1 << 20, Key: 42,
		EP: []byte{2, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}}
}

func TestAddressRoundTrip(t *testing.T) {
	a := sampleAddress()
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeAddress(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rank != a.Rank || got.Provider != a.Provider || got.HeapBase != a.HeapBase ||
		got.HeapSize != a.HeapSize || got.Key != a.Key || !bytes.Equal(got.EP, a.EP) {
		t.Fatalf("round trip: %+v, want %+v", got, a)
	}
	b[len(b)-1] ^= 0xff
	if got.EP[len(got.EP)-1] != a.EP[len(a.EP)-1] {
		t.Fatal("decoded address shares memory with its input")
	}
}

func TestDecodeAddressRefuses(t *testing.T) {
	good, _ := sampleAddress().MarshalBinary()
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	bad := map[string][]byte{
		"empty":          nil,
		"short":          good[:10],
		"magic":          mut(func(b []byte) []byte { b[0] = 'X'; return b }),
		"version":        mut(func(b []byte) []byte { b[4] = 9; return b }),
		"rank":           mut(func(b []byte) []byte { b[5] = 0x80; return b }),
		"heap wraps":     mut(func(b []byte) []byte { copy(b[9:17], bytes.Repeat([]byte{0xff}, 8)); return b }),
		"provider len":   mut(func(b []byte) []byte { b[33] = 200; return b }),
		"provider empty": mut(func(b []byte) []byte { b[33] = 0; return b }),
		"provider byte":  mut(func(b []byte) []byte { b[34] = 0; return b }),
		"trailing":       append(append([]byte(nil), good...), 0),
		"truncated ep":   good[:len(good)-1],
	}
	for name, b := range bad {
		if _, err := DecodeAddress(b); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := (Address{Rank: 0, Provider: "x"}).MarshalBinary(); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("marshal without endpoint name: %v", err)
	}
}

// FuzzDecodeAddress: no input panics, and whatever decodes re-encodes to the
// same bytes.
func FuzzDecodeAddress(f *testing.F) {
	good, _ := sampleAddress().MarshalBinary()
	f.Add(good)
	f.Add([]byte("GSHF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAddress(b)
		if err != nil {
			return
		}
		again, err := a.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded address does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs")
		}
	})
}
