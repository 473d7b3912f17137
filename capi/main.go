// Command capi is libgoshmem: the OpenSHMEM 1.5 C API (include/shmem.h)
// and CANN SHMEM's start-up names (include/shmemx.h) on goshmem, built with
//
//	go build -buildmode=c-shared -o libgoshmem.so ./capi
//
// or by cmd/oshcc, which also compiles and links C programs against it.
//
// The typed routines are C (typed_gen.c, written by go generate from the
// spec's list); they reach mapped peers directly (gs.h) and call the Go
// exports in this package for everything else. Go functions here use only
// the public API of github.com/goshmem/shmem.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -O2 -std=gnu11 -Wall -Wno-unused-function
#include "gs.h"
*/
import "C"

//go:generate go run ./internal/cgen .

func main() {}
