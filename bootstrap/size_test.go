package bootstrap

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1", 1},
		{"1073741824", 1 << 30},
		{"512b", 512},
		{"512B", 512},
		{"1k", 1 << 10},
		{"1K", 1 << 10},
		{"64kb", 64 << 10},
		{"64KB", 64 << 10},
		{"64Kb", 64 << 10},
		{"3m", 3 << 20},
		{"3MB", 3 << 20},
		{"2g", 2 << 30},
		{"2G", 2 << 30},
		{"1GiB", 1 << 30},
		{"1gi", 1 << 30},
		{"5t", 5 << 40},
		{"5TB", 5 << 40},
		{" 16M\n", 16 << 20},
		{"007", 7},
		{"9223372036854775807", math.MaxInt64},
		{"9223372036854775807b", math.MaxInt64},
		{"8388607t", 8388607 << 40},
		{"8589934591g", 8589934591 << 30},
		{"1.5g", 3 << 29},
		{"1.5GiB", 3 << 29},
		{"0.5k", 512},
		{"2.25m", 9 << 18},
		{"0.001k", 2},          // 1.024 bytes: the ceiling
		{"1.000000001k", 1025}, // 1024.000001 bytes
		{"3.1M", 3250586},      // the specification's example
		{"20m", 20971520},      // the specification's example
		{".5m", 1 << 19},       // "the same result as 0.5m"
		{"20kk", 20 << 10},     // characters after the multiplier are ignored
		{"1kiB2", 1 << 10},
		{"1gbyte", 1 << 30},
		{"1.5", 2},
		{"1.", 1},
		{"0.1234567891k", 127}, // 126.4 bytes: no limit on fraction digits
		{"8388607.999999t", 8388607<<40 + 1099510528265},
	}
	for _, c := range cases {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseSizeRejects(t *testing.T) {
	for _, in := range []string{
		"", " ", ".", ".k", "-1", "-1k", "+1", "1.2.3", "1e9", "0x10", "1 k", "k", "b", "kb",
		"1bb", "1ib", "1i", "1p", "12 34", "1_000",
		"9223372036854775808",  // MaxInt64 + 1
		"99999999999999999999", // would wrap uint64 in a naive loop
		"8388608t",             // 2^23 TiB = 2^63
		"8589934592g",
		"18446744073709551616",
		"100000000000000000000000000000000000000000000000000000000000000000000",
	} {
		got, err := ParseSize(in)
		if !errors.Is(err, errs.ErrInvalidArgument) || got != 0 {
			t.Errorf("ParseSize(%q) = %d, %v; want ErrInvalidArgument", in, got, err)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "1k", "512MB", "2GiB", "9223372036854775807", "8388608t", "-1", "1.5g", " 3t "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidArgument) || n != 0 {
				t.Fatalf("ParseSize(%q) = %d, %v", s, n, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", s, n)
		}
		// Plain decimal always reads back to the same number.
		back, err := ParseSize(strconv.FormatInt(n, 10))
		if err != nil || back != n {
			t.Fatalf("ParseSize(%d) = %d, %v", n, back, err)
		}
	})
}
