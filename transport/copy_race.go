//go:build race

package transport

import (
	"runtime"
	"unsafe"
)

// raceCopy tells the race detector of the reads and writes of a copy its
// instrumentation cannot see (repCopy's assembly). Ranges outside Go's
// memory, such as a peer's mapped heap, are ignored by the detector.
func raceCopy(dst, src []byte) {
	runtime.RaceReadRange(unsafe.Pointer(&src[0]), len(src))
	runtime.RaceWriteRange(unsafe.Pointer(&dst[0]), len(dst))
}
