package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/goshmem/shmem"
)

// goldenPath is where run.sh's golden step leaves the gathered result of
// size m, as CANN SHMEM's data_gen.py leaves golden files for its kernel.
func goldenPath(dir string, m int) string {
	return filepath.Join(dir, fmt.Sprintf("golden_m%d.bin", m))
}

// raw is the bytes of v in memory order, as a PE holds them.
func raw[T shmem.Elem](v []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(zero)))
}

// genGolden writes, for every size, the result every PE of n must gather.
func genGolden[T shmem.Elem](dir string, n int, gen func(*rand.Rand) T) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zero T
	for _, m := range sizes(n, int(unsafe.Sizeof(zero))) {
		all := make([]T, 0, m*n)
		for q := 0; q < n; q++ {
			all = append(all, input(q, m, gen)...)
		}
		if err := os.WriteFile(goldenPath(dir, m), raw(all), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkGoldenFile compares what PE me gathered with the golden file.
func checkGoldenFile[T shmem.Elem](dir string, me, m int, got []T) error {
	want, err := os.ReadFile(goldenPath(dir, m))
	if err != nil {
		return fmt.Errorf("PE %d: golden data: %v", me, err)
	}
	if g := raw(got); !bytes.Equal(g, want) {
		return fmt.Errorf("M=%d: PE %d gathered %d bytes that differ from %s (%d bytes)", m, me, len(g), goldenPath(dir, m), len(want))
	}
	return nil
}

// genFor is -gen-golden for the element type named typ.
func genFor(dir string, n int, typ string) error {
	switch typ {
	case "int32":
		return genGolden(dir, n, func(r *rand.Rand) int32 { return int32(r.IntN(10)) })
	case "float16":
		return genGolden(dir, n, func(r *rand.Rand) shmem.Float16 { return shmem.NewFloat16(r.Float32() * 10) })
	}
	return genGolden(dir, n, func(r *rand.Rand) shmem.BFloat16 { return shmem.NewBFloat16(r.Float32() * 10) })
}
