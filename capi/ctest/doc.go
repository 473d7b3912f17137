// Package ctest tests libgoshmem from C: it builds the library and C
// programs with cmd/oshcc and runs them under cmd/shmemrun (or as a
// unique-ID world it starts itself), checking their output. Under -race
// the library, oshcc and shmemrun are race-built too (oshcc --race). The
// tests skip when no C compiler is installed.
package ctest
