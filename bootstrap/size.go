package bootstrap

import (
	"math"
	"strings"

	"github.com/goshmem/shmem/internal/errs"
)

// EnvSymmetricSize is the symmetric heap size variable, parsed by ParseSize.
const EnvSymmetricSize = "SHMEM_SYMMETRIC_SIZE"

// ParseSize reads a byte count as SHMEM_SYMMETRIC_SIZE is written: decimal
// digits, then optionally a unit k, m, g or t (case-insensitive, binary:
// 1k = 1024), an optional 'i' after the unit (1GiB), and an optional
// trailing b or B. Surrounding spaces are ignored. "512", "512b", "64k",
// "2G", "1TiB" parse, and so does a decimal fraction before a unit ("1.5g",
// at most 9 fraction digits, rounded down to whole bytes); negatives, signs,
// a fraction without a unit (a part of a byte), inner spaces, an empty
// string and values above math.MaxInt64 are errors wrapping
// errs.ErrInvalidArgument that say which of these it was.
func ParseSize(s string) (int64, error) {
	bad := func(format string, args ...any) (int64, error) {
		return 0, errs.New("ParseSize", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	t := strings.TrimSpace(s)
	if len(t) > 64 {
		return bad("size is %d characters long", len(t))
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	digits, suffix := t[:i], strings.ToLower(t[i:])
	if digits == "" {
		return bad("size %q does not start with a decimal number", s)
	}
	var frac string
	if strings.HasPrefix(suffix, ".") {
		j := 1
		for j < len(suffix) && suffix[j] >= '0' && suffix[j] <= '9' {
			j++
		}
		frac, suffix = suffix[1:j], suffix[j:]
		switch {
		case frac == "":
			return bad("size %q has a point but no digits after it", s)
		case len(frac) > 9:
			return bad("size %q has more than 9 fraction digits", s)
		case suffix == "" || suffix[0] == 'b':
			return bad("size %q has a fraction of a byte: give a unit (k, m, g, t) or whole bytes", s)
		}
	}
	var shift uint
	if suffix != "" {
		switch suffix[0] {
		case 'k':
			shift = 10
		case 'm':
			shift = 20
		case 'g':
			shift = 30
		case 't':
			shift = 40
		}
		rest := suffix
		if shift != 0 {
			rest = strings.TrimPrefix(suffix[1:], "i")
		}
		if rest != "" && rest != "b" {
			return bad("size %q: unit must be k, m, g or t with an optional b", s)
		}
	}
	var n uint64
	for j := 0; j < len(digits); j++ {
		d := uint64(digits[j] - '0')
		if n > (math.MaxInt64-d)/10 {
			return bad("size %q overflows int64", s)
		}
		n = n*10 + d
	}
	if n > math.MaxInt64>>shift {
		return bad("size %q overflows int64", s)
	}
	n <<= shift
	if frac != "" {
		// frac/10^len(frac) of a unit, in bytes, rounded down: at most
		// 9 digits times 2^40 fits in a uint64.
		var f, scale uint64 = 0, 1
		for j := 0; j < len(frac); j++ {
			f, scale = f*10+uint64(frac[j]-'0'), scale*10
		}
		add := (f << shift) / scale
		if n > math.MaxInt64-add {
			return bad("size %q overflows int64", s)
		}
		n += add
	}
	return int64(n), nil
}
