package fabric

import (
	"bytes"
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func sampleAddress() Address {
	return Address{Rank: 3, Provider: "tcp;ofi_rxm", HeapBase: 0x7f0000000000, HeapSize: 1 << 20, Key: 42,
		StaticsBase: 0x55d4c0e00000, StaticsSize: 12288, StaticsKey: 43,
		EP: []byte{2, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}}
}

// Offsets of the fields in an encoded sampleAddress.
const (
	atVersion     = 4
	atHeapBase    = 9
	atStaticsBase = 33
	atStaticsSize = 41
	atStaticsKey  = 49
	atProviderLen = 57
)

// Every field survives the round trip, with a statics region and without
// one.
func TestAddressRoundTrip(t *testing.T) {
	noStatics := sampleAddress()
	noStatics.StaticsBase, noStatics.StaticsSize, noStatics.StaticsKey = 0, 0, 0
	for _, a := range []Address{sampleAddress(), noStatics} {
		b, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != addrFixed+len(a.Provider)+len(a.EP) || b[atVersion] != 2 {
			t.Fatalf("encoding of %d bytes, version %d", len(b), b[atVersion])
		}
		got, err := DecodeAddress(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Rank != a.Rank || got.Provider != a.Provider || got.HeapBase != a.HeapBase ||
			got.HeapSize != a.HeapSize || got.Key != a.Key || got.StaticsBase != a.StaticsBase ||
			got.StaticsSize != a.StaticsSize || got.StaticsKey != a.StaticsKey || !bytes.Equal(got.EP, a.EP) {
			t.Fatalf("round trip: %+v, want %+v", got, a)
		}
		b[len(b)-1] ^= 0xff
		if got.EP[len(got.EP)-1] != a.EP[len(a.EP)-1] {
			t.Fatal("decoded address shares memory with its input")
		}
	}
}

func TestDecodeAddressRefuses(t *testing.T) {
	good, _ := sampleAddress().MarshalBinary()
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	bad := map[string][]byte{
		"empty":         nil,
		"short":         good[:10],
		"magic":         mut(func(b []byte) []byte { b[0] = 'X'; return b }),
		"version":       mut(func(b []byte) []byte { b[atVersion] = 9; return b }),
		"version 1":     mut(func(b []byte) []byte { b[atVersion] = 1; return b }),
		"rank":          mut(func(b []byte) []byte { b[5] = 0x80; return b }),
		"heap wraps":    mut(func(b []byte) []byte { copy(b[atHeapBase:], bytes.Repeat([]byte{0xff}, 8)); return b }),
		"statics wraps": mut(func(b []byte) []byte { copy(b[atStaticsBase:], bytes.Repeat([]byte{0xff}, 8)); return b }),
		"statics huge":  mut(func(b []byte) []byte { clear(b[atStaticsBase : atStaticsBase+8]); b[atStaticsSize] = 0x80; return b }),
		"statics key without region": mut(func(b []byte) []byte {
			clear(b[atStaticsBase : atStaticsBase+16])
			return b
		}),
		"statics base without region": mut(func(b []byte) []byte {
			clear(b[atStaticsSize : atStaticsSize+16])
			return b
		}),
		"provider len":   mut(func(b []byte) []byte { b[atProviderLen] = 200; return b }),
		"provider empty": mut(func(b []byte) []byte { b[atProviderLen] = 0; return b }),
		"provider byte":  mut(func(b []byte) []byte { b[atProviderLen+1] = 0; return b }),
		"trailing":       append(append([]byte(nil), good...), 0),
		"truncated ep":   good[:len(good)-1],
		"short of ep":    good[:addrFixed-1],
	}
	for name, b := range bad {
		if _, err := DecodeAddress(b); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := (Address{Rank: 0, Provider: "x"}).MarshalBinary(); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("marshal without endpoint name: %v", err)
	}
	keyOnly := sampleAddress()
	keyOnly.StaticsBase, keyOnly.StaticsSize = 0, 0
	if _, err := keyOnly.MarshalBinary(); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("marshal of a statics key without a region: %v", err)
	}
}

// FuzzDecodeAddress: no input panics, and whatever decodes re-encodes to the
// same bytes.
func FuzzDecodeAddress(f *testing.F) {
	good, _ := sampleAddress().MarshalBinary()
	f.Add(good)
	noStatics := sampleAddress()
	noStatics.StaticsBase, noStatics.StaticsSize, noStatics.StaticsKey = 0, 0, 0
	bare, _ := noStatics.MarshalBinary()
	f.Add(bare)
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
