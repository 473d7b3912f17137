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
// "2G", "1TiB" parse; negatives, fractions, signs, inner spaces, an empty
// string and values above math.MaxInt64 are errors wrapping
// errs.ErrInvalidArgument.
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
	return int64(n << shift), nil
}
