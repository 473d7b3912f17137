package bootstrap

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func pinOf(b byte) [32]byte {
	var p [32]byte
	for i := range p {
		p[i] = b + byte(i)
	}
	return p
}

func TestNewUniqueIDRoundTrip(t *testing.T) {
	cases := []struct {
		addr string
		tls  bool
		pin  [32]byte
	}{
		{"127.0.0.1:1234", false, [32]byte{}},
		{"[::1]:65535", true, pinOf(7)},
		{"[fe80::1%eth0]:1", false, [32]byte{}},
		{"node-17.cluster.example:29500", true, pinOf(200)},
		{"localhost:80", false, [32]byte{}},
	}
	for _, c := range cases {
		u, err := NewUniqueID(c.addr, c.tls, c.pin)
		if err != nil {
			t.Fatalf("NewUniqueID(%q): %v", c.addr, err)
		}
		if u.Version != UniqueIDVersion || u.Addr != c.addr || u.TLS != c.tls || u.Pin != c.pin {
			t.Fatalf("NewUniqueID(%q) = %+v", c.addr, u)
		}
		if u.Secret == ([32]byte{}) {
			t.Fatalf("NewUniqueID(%q): zero secret", c.addr)
		}
		s := u.String()
		if !strings.HasPrefix(s, "gsu1.") || len(s) > maxUniqueIDLen {
			t.Fatalf("String() = %q", s)
		}
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				t.Fatalf("String() = %q holds %q", s, r)
			}
		}
		got, err := ParseUniqueID(s)
		if err != nil {
			t.Fatalf("ParseUniqueID(%q): %v", s, err)
		}
		if got != u {
			t.Fatalf("round trip: got %+v want %+v", got, u)
		}
		if err := u.Validate(); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	}
}

func TestNewUniqueIDSecretsDiffer(t *testing.T) {
	a, err := NewUniqueID("127.0.0.1:1", false, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewUniqueID("127.0.0.1:1", false, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Secret == b.Secret || a == b {
		t.Fatal("two NewUniqueID calls returned the same secret")
	}
}

func TestNewUniqueIDRejects(t *testing.T) {
	cases := []struct {
		name, addr string
		tls        bool
		pin        [32]byte
		want       string
	}{
		{"port zero", "127.0.0.1:0", false, [32]byte{}, "bad port 0"},
		{"port too big", "127.0.0.1:65536", false, [32]byte{}, "above 65535"},
		{"no port", "127.0.0.1", false, [32]byte{}, "missing port"},
		{"empty", "", false, [32]byte{}, "empty address"},
		{"tls without pin", "127.0.0.1:1", true, [32]byte{}, "no certificate pin"},
		{"pin without tls", "127.0.0.1:1", false, pinOf(1), "TLS off"},
		{"unbracketed v6", "::1:80", false, [32]byte{}, "must be written [ipv6]:port"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewUniqueID(c.addr, c.tls, c.pin)
			if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrInvalidArgument mentioning %q", err, c.want)
			}
		})
	}
}

// encodeRaw builds a token from raw fields, bypassing String's checks, so
// the parser's every refusal can be reached.
func encodeRaw(version, flags byte, secret, pin [32]byte, addrLen int, addr string) string {
	b := []byte{version, flags}
	b = append(b, secret[:]...)
	b = append(b, pin[:]...)
	b = append(b, byte(addrLen))
	b = append(b, addr...)
	return "gsu1." + base64.RawURLEncoding.EncodeToString(b)
}

// padBitsSet flips the lowest bit of a token's last character. 82 bytes
// encode to 110 characters whose last carries 2 data bits and 4 padding
// bits, so the flip touches padding only and a lax decoder would accept it.
func padBitsSet(tok string) string {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alpha, tok[len(tok)-1])
	return tok[:len(tok)-1] + string(alpha[last^1])
}

func TestParseUniqueIDRejects(t *testing.T) {
	sec := pinOf(9)
	good := encodeRaw(1, 0, sec, [32]byte{}, 14, "127.0.0.1:1234")
	if _, err := ParseUniqueID(good); err != nil {
		t.Fatalf("control token rejected: %v", err)
	}
	cases := []struct {
		name, s, want string
	}{
		{"empty", "", "does not start with"},
		{"wrong prefix", "gsu2." + good[5:], "does not start with"},
		{"too long", "gsu1." + strings.Repeat("A", maxUniqueIDLen), "longer than"},
		{"not base64", "gsu1.!!!!", "outside base64url"},
		{"padded base64", good + "==", "outside base64url"},
		{"std alphabet", "gsu1.+/+/", "outside base64url"},
		{"embedded newline", good[:20] + "\n" + good[20:], "outside base64url"},
		{"embedded CR", good[:20] + "\r" + good[20:], "outside base64url"},
		{"bad length", good + "A", "not base64url"},
		{"nonzero pad bits", padBitsSet(encodeRaw(1, 0, sec, [32]byte{}, 15, "127.0.0.1:12345")), "not base64url"},
		{"short", "gsu1." + base64.RawURLEncoding.EncodeToString([]byte{1, 0, 3}), "shorter than"},
		{"version 0", encodeRaw(0, 0, sec, [32]byte{}, 14, "127.0.0.1:1234"), "version 0"},
		{"version 2", encodeRaw(2, 0, sec, [32]byte{}, 14, "127.0.0.1:1234"), "version 2"},
		{"unknown flag", encodeRaw(1, 2, sec, [32]byte{}, 14, "127.0.0.1:1234"), "unknown flags"},
		{"zero secret", encodeRaw(1, 0, [32]byte{}, [32]byte{}, 14, "127.0.0.1:1234"), "secret is all zero"},
		{"tls no pin", encodeRaw(1, 1, sec, [32]byte{}, 14, "127.0.0.1:1234"), "no certificate pin"},
		{"pin no tls", encodeRaw(1, 0, sec, pinOf(3), 14, "127.0.0.1:1234"), "TLS off"},
		{"length too big", encodeRaw(1, 0, sec, [32]byte{}, 15, "127.0.0.1:1234"), "address length 15 but 14"},
		{"length too small", encodeRaw(1, 0, sec, [32]byte{}, 13, "127.0.0.1:1234"), "address length 13 but 14"},
		{"empty addr", encodeRaw(1, 0, sec, [32]byte{}, 0, ""), "empty address"},
		{"port 0", encodeRaw(1, 0, sec, [32]byte{}, 11, "127.0.0.1:0"), "bad port 0"},
		{"port 99999", encodeRaw(1, 0, sec, [32]byte{}, 15, "127.0.0.1:99999"), "above 65535"},
		{"port sign", encodeRaw(1, 0, sec, [32]byte{}, 12, "127.0.0.1:+1"), "not a decimal"},
		{"port leading zero", encodeRaw(1, 0, sec, [32]byte{}, 13, "127.0.0.1:080"), "bad port"},
		{"no host", encodeRaw(1, 0, sec, [32]byte{}, 5, ":1234"), "no host"},
		{"bad host", encodeRaw(1, 0, sec, [32]byte{}, 12, "a..b.c:12345"), "neither an IP"},
		{"space", encodeRaw(1, 0, sec, [32]byte{}, 8, "a b:1234"), "space"},
		{"newline", encodeRaw(1, 0, sec, [32]byte{}, 8, "ab\n:1234"), "control"},
		{"v4 in brackets", encodeRaw(1, 0, sec, [32]byte{}, 15, "[127.0.0.1]:123"), "brackets"},
		{"bad ipv4", encodeRaw(1, 0, sec, [32]byte{}, 14, "300.1.1.1:1234"), "neither an IP"},
		{"v4 zone", encodeRaw(1, 0, sec, [32]byte{}, 15, "10.0.0.1%e:1234"), "not an IPv6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := ParseUniqueID(c.s)
			if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseUniqueID(%q) err = %v, want ErrInvalidArgument mentioning %q", c.s, err, c.want)
			}
			if u != (UniqueID{}) {
				t.Fatalf("ParseUniqueID returned %+v with its error", u)
			}
		})
	}
}

func TestStringOfInvalidIDDoesNotParse(t *testing.T) {
	cases := []UniqueID{
		{},
		{Version: 1, Addr: strings.Repeat("a", 300) + ":1", Secret: pinOf(1)},
		{Version: 1, Addr: "127.0.0.1:1"}, // zero secret
		{Version: 7, Addr: "127.0.0.1:1", Secret: pinOf(1)},
	}
	for _, u := range cases {
		if err := u.Validate(); err == nil {
			t.Fatalf("Validate(%+v) = nil", u)
		}
		if _, err := ParseUniqueID(u.String()); err == nil {
			t.Fatalf("token of invalid %+v parsed", u)
		}
	}
}

func FuzzParseUniqueID(f *testing.F) {
	u, _ := NewUniqueID("[::1]:29500", true, pinOf(5))
	f.Add(u.String())
	f.Add(encodeRaw(1, 0, pinOf(9), [32]byte{}, 14, "127.0.0.1:1234"))
	f.Add("gsu1.")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseUniqueID(s)
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		if err := u.Validate(); err != nil {
			t.Fatalf("parsed ID fails Validate: %v", err)
		}
		if got := u.String(); got != s {
			t.Fatalf("String() = %q, parsed from %q", got, s)
		}
	})
}
