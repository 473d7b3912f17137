package actors

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"testing"
)

func samples() []any {
	return []any{
		&Gather{Domain: "heap", Seq: 42, Rank: 3, N: 8, Members: []int{0, 1, 2, 3, 4, 5, 6, 7}, Payload: []byte{1, 2, 3}},
		&Gather{},
		&GatherReply{Payloads: [][]byte{{1}, nil, {2, 3}}, Failed: -1},
		&GatherReply{Err: "PE failed: boom", Failed: 5},
		&PEFailed{Rank: 7, Reason: "heartbeat lost"},
		&PEFailed{Rank: 7, Reason: "lost the connection to PE 7", Origin: 2},
		&GlobalExit{Rank: 1, Status: -3},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range samples() {
		b, err := Encode(m)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(m)) {
			t.Errorf("%T: got %+v, want %+v", m, got, m)
		}
	}
	if _, err := Encode(struct{}{}); err == nil {
		t.Error("Encode accepted an unknown type")
	}
	if _, err := Encode(&Gather{Payload: make([]byte, MaxMessage)}); err == nil {
		t.Error("Encode accepted an oversized message")
	}
}

// normalize maps empty slices to nil: msgpack does not tell them apart.
func normalize(m any) any {
	switch m := m.(type) {
	case *Gather:
		c := *m
		if len(c.Members) == 0 {
			c.Members = nil
		}
		if len(c.Payload) == 0 {
			c.Payload = nil
		}
		return &c
	case *GatherReply:
		c := *m
		c.Payloads = append([][]byte(nil), c.Payloads...)
		for i, p := range c.Payloads {
			if len(p) == 0 {
				c.Payloads[i] = nil
			}
		}
		if len(c.Payloads) == 0 {
			c.Payloads = nil
		}
		return &c
	}
	return m
}

func header(tag Tag) []byte { return []byte{Version, byte(tag)} }

// hostile returns inputs that would make a naive msgpack decoder allocate
// gigabytes or recurse until the stack overflows.
func hostile() map[string][]byte {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	deep := bytes.Repeat([]byte{0x91}, 100000) // [[[[...]]]]
	return map[string][]byte{
		"bin32 length bomb":   cat(header(TagGather), []byte{0x81, 0xa1, 'p', 0xc6, 0xff, 0xff, 0xff, 0xf0}, []byte("x")),
		"str32 length bomb":   cat(header(TagPEFailed), []byte{0x81, 0xa1, 'w', 0xdb, 0x7f, 0xff, 0xff, 0xff}),
		"array32 length bomb": cat(header(TagGather), []byte{0x81, 0xa1, 'm', 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}),
		"map32 length bomb":   cat(header(TagGatherReply), []byte{0xdf, 0xff, 0xff, 0xff, 0xff}),
		"array of bin32 bombs": cat(header(TagGatherReply), []byte{0x81, 0xa1, 'p', 0xdc, 0x00, 0x03},
			[]byte{0xc6, 0x7f, 0, 0, 0, 0xc6, 0x7f, 0, 0, 0, 0xc6, 0x7f, 0, 0, 0}),
		"deep nesting":     cat(header(TagGatherReply), []byte{0x81, 0xa1, 'p'}, deep),
		"deep maps":        cat(header(TagGlobalExit), bytes.Repeat([]byte{0x81, 0xa1, 'r'}, 50000), []byte{0x01}),
		"extension type":   cat(header(TagGlobalExit), []byte{0xd4, 0x01, 0x00}),
		"reserved byte":    cat(header(TagGlobalExit), []byte{0xc1}),
		"trailing bytes":   cat(header(TagGlobalExit), []byte{0x80, 0x80}),
		"empty body":       header(TagGlobalExit),
		"unknown tag":      {Version, 99, 0x80},
		"tag zero":         {Version, 0, 0x80},
		"wrong version":    {Version + 1, byte(TagGlobalExit), 0x80},
		"too short":        {Version},
		"empty":            nil,
		"oversized":        cat(header(TagGather), make([]byte, MaxMessage)),
		"wrong field type": cat(header(TagGlobalExit), []byte{0x81, 0xa1, 'r', 0xa3, 'a', 'b', 'c'}),
	}
}

// TestHostileInputRejected: every hostile input is rejected with
// errMalformed, without panicking, and decoding it allocates little.
func TestHostileInputRejected(t *testing.T) {
	for name, b := range hostile() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Decode(b)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, errMalformed) {
			t.Errorf("%s: err = %v, want malformed", name, err)
		}
		// Far below any length the input claims; the bound is generous
		// because the error message and test bookkeeping allocate too.
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("%s: decoding allocated %d bytes", name, got)
		}
	}
}

// FuzzDecode: no input makes Decode panic, hang or allocate without bound;
// whatever it accepts re-encodes to a message it decodes to the same value.
func FuzzDecode(f *testing.F) {
	for _, m := range samples() {
		b, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, b := range hostile() {
		if len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error %v does not wrap errMalformed", err)
			}
			return
		}
		again, err := Encode(m)
		if err != nil {
			t.Fatalf("accepted %x but cannot re-encode %+v: %v", b, m, err)
		}
		m2, err := Decode(again)
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", m, err)
		}
		if !reflect.DeepEqual(normalize(m), normalize(m2)) {
			t.Fatalf("round trip changed %+v into %+v", m, m2)
		}
	})
}
