package bootstrap

import (
	"math/big"
	"strings"

	"github.com/goshmem/shmem/internal/errs"
)

// EnvSymmetricSize is the symmetric heap size variable, parsed by ParseSize.
const EnvSymmetricSize = "SHMEM_SYMMETRIC_SIZE"

// ParseSize reads a byte count as OpenSHMEM 1.5 defines
// SHMEM_SYMMETRIC_SIZE: a non-negative decimal number, whole or with a
// fraction ("3.1", ".5"), then optionally one multiplier k, m, g or t
// (case-insensitive, binary: 1k = 1024). The result is the integer ceiling
// of the number times the multiplier ("3.1M" is 3250586 bytes, "1.5" is 2).
// As the specification says, characters after the multiplier are ignored,
// so "1GiB" and "64kb" read as 1g and 64k and "20kk" as 20k, not 20m.
// Without a multiplier only a trailing b or B may follow ("512b").
// Surrounding spaces are ignored. An empty string, signs, exponents,
// inner spaces, an unknown unit and values above math.MaxInt64 are errors
// wrapping errs.ErrInvalidArgument that say which of these it was.
func ParseSize(s string) (int64, error) {
	bad := func(format string, args ...any) (int64, error) {
		return 0, errs.New("ParseSize", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	t := strings.TrimSpace(s)
	if len(t) > 64 {
		return bad("size is %d characters long", len(t))
	}
	i, dot := 0, -1
	for ; i < len(t); i++ {
		switch {
		case t[i] >= '0' && t[i] <= '9':
		case t[i] == '.' && dot < 0:
			dot = i
		default:
			goto number
		}
	}
number:
	num, suffix := t[:i], strings.ToLower(t[i:])
	if num == "" || num == "." {
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
		case 'b':
			if suffix != "b" {
				return bad("size %q: only a b may follow a number without a unit", s)
			}
		default:
			return bad("size %q: unit must be k, m, g or t", s)
		}
	}
	// Exact arithmetic: the number has at most 64 characters, and the
	// ceiling must not fall below the product however many digits the
	// fraction has.
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return bad("size %q is not a decimal number", s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift)))
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return bad("size %q overflows int64", s)
	}
	return q.Int64(), nil
}
