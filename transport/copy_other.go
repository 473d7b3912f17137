//go:build !amd64

package transport

import "unsafe"

// fastRepCopy is false: only amd64 has a string copy Copy uses.
const fastRepCopy = false

// repCopy is never called where fastRepCopy is false.
func repCopy(dst, src unsafe.Pointer, n uintptr) {
	copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
}
