// Command copyref measures transport.Copy, the copy every same-host put
// and get makes, against the C library's memcpy (the copy OSHMEM's UCX
// shared-memory puts make) and Go's built-in copy, in one process on the
// same two shared mappings.
//
// The two-process bandwidth rows of bench/compare.sh move by up to 2x
// between runs a minute apart on a shared VM, more than any difference
// between the copy routines. Here the routines alternate every few
// milliseconds and each round's ratio is taken before the median, so that
// drift cancels; the order rotates each round so none always runs first.
//
// Usage (bench/compare.sh runs it with OSHMEM's GLIBC_TUNABLES, so that
// memcpy here is the one OSHMEM's processes use):
//
//	go run ./bench/copyref [-rounds 61] [-min 65536] [-max 4194304]
//
// It prints a Markdown table: per size, the median over rounds of each
// routine's bandwidth divided by memcpy's in the same round (higher is
// faster), and memcpy's median GB/s.
package main

/*
#include <string.h>

static void c_memcpy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
*/
import "C"

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"syscall"
	"time"
	"unsafe"

	"github.com/goshmem/shmem/transport"
)

func main() {
	rounds := flag.Int("rounds", 61, "interleaved rounds per size")
	minSize := flag.Int("min", 64<<10, "smallest copy in bytes")
	maxSize := flag.Int("max", 4<<20, "largest copy in bytes")
	flag.Parse()
	if err := run(*rounds, *minSize, *maxSize); err != nil {
		fmt.Fprintln(os.Stderr, "copyref:", err)
		os.Exit(1)
	}
}

// routine is one copy under test.
type routine struct {
	name string
	copy func(dst, src []byte)
}

func run(rounds, minSize, maxSize int) error {
	if minSize < 1 || maxSize < minSize || rounds < 1 {
		return fmt.Errorf("need 1 <= -min <= -max and -rounds >= 1")
	}
	// Shared mappings, as a PE's heap and its peer's are (tmpfs pages).
	src, err := mapShared(maxSize)
	if err != nil {
		return err
	}
	defer syscall.Munmap(src)
	dst, err := mapShared(maxSize)
	if err != nil {
		return err
	}
	defer syscall.Munmap(dst)
	for i := range src { // else reads hit the zero page
		src[i], dst[i] = byte(i), byte(i>>8)
	}
	routines := []routine{
		{"memcpy", cMemcpy},
		{"transport.Copy", transport.Copy},
		{"copy", func(d, s []byte) { copy(d, s) }},
	}
	fmt.Printf("| size | transport.Copy / memcpy | copy / memcpy | memcpy GB/s |\n|---|---:|---:|---:|\n")
	for n := minSize; n <= maxSize; n *= 2 {
		ratios := make([][]float64, len(routines))
		var base []float64
		reps := max(1, (8<<20)/n) // about a millisecond a routine
		for r := 0; r < rounds; r++ {
			rate := make([]float64, len(routines))
			for k := range routines {
				i := (k + r) % len(routines)
				rate[i] = measure(routines[i].copy, dst[:n], src[:n], reps)
			}
			for i := range routines {
				ratios[i] = append(ratios[i], rate[i]/rate[0])
			}
			base = append(base, rate[0])
		}
		fmt.Printf("| %s | %.2f | %.2f | %.1f |\n", size(n), median(ratios[1]), median(ratios[2]), median(base)/1e9)
	}
	return nil
}

// measure returns copy's rate in bytes per second over reps copies.
func measure(copy func(dst, src []byte), dst, src []byte, reps int) float64 {
	start := time.Now()
	for i := 0; i < reps; i++ {
		copy(dst, src)
	}
	return float64(len(src)*reps) / time.Since(start).Seconds()
}

func cMemcpy(dst, src []byte) {
	C.c_memcpy(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), C.size_t(len(src)))
}

func mapShared(n int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	return b, nil
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
