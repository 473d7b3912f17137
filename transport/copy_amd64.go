package transport

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// fastRepCopy is whether the CPU reports enhanced REP MOVSB (ERMS), set
// once at start-up and never written again.
var fastRepCopy = cpu.X86.HasERMS

// repCopy copies n > 0 bytes from src to dst, which must not overlap, with
// one REP MOVSB.
//
//go:noescape
func repCopy(dst, src unsafe.Pointer, n uintptr)
