package shmem

import (
	"math"

	"github.com/x448/float16"
)

// Float16 is an IEEE 754 half-precision number, stored as its bits. It is
// an Elem (uint16 underneath), so it can live in symmetric memory, be put
// and got, and be reduced with Sum, Prod, Min and Max, which compute in
// float32 and round back to half after every operation.
type Float16 uint16

// NewFloat16 rounds f to the nearest half (ties to even); values beyond
// the half range become infinities, NaN stays NaN.
func NewFloat16(f float32) Float16 { return Float16(float16.Fromfloat32(f).Bits()) }

// Float32 returns h exactly.
func (h Float16) Float32() float32 { return float16.Frombits(uint16(h)).Float32() }

// BFloat16 is a bfloat16 number (the top half of a float32), stored as its
// bits; like Float16 it is an Elem whose reductions compute in float32.
type BFloat16 uint16

// NewBFloat16 rounds f to the nearest bfloat16 (ties to even); NaN stays
// NaN (quieted), and values past the largest bfloat16 become infinities.
func NewBFloat16(f float32) BFloat16 {
	b := math.Float32bits(f)
	if f != f {
		return BFloat16(b>>16 | 0x40)
	}
	b += 0x7fff + (b>>16)&1
	return BFloat16(b >> 16)
}

// Float32 returns b exactly.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }
