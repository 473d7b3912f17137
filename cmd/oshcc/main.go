// Command oshcc compiles and links C OpenSHMEM programs against goshmem's
// libgoshmem, as OpenSHMEM implementations' oshcc do:
//
//	go run ./cmd/oshcc prog.c -o prog   # then: shmemrun -np 4 ./prog
//
// Every argument goes to the C compiler ($CC, else cc). oshcc adds the
// include directory of shmem.h and shmemx.h and, when linking, libgoshmem
// with an rpath to it. It builds libgoshmem when needed (go build
// -buildmode=c-shared ./capi) and caches it under the user's cache
// directory keyed by a hash of the library's sources and the Go version.
//
// Flags of its own, removed before the compiler sees them:
//
//	--showme          print the compiler command instead of running it
//	--static-goshmem  link libgoshmem.a (go build -buildmode=c-archive)
//	--lib-dir         print the directory of the cached library and exit
//	--race            use libgoshmem built with the race detector (go build
//	                  -race), cached apart from the plain one
//	--fabric          use libgoshmem built with the libfabric provider (go
//	                  build -tags goshmem_fabric; needs libfabric-dev), so
//	                  SHMEM_RDMA_PROVIDER=fabric works; cached apart too
//
// With --race the Go inside the library runs under Go's race detector
// (ThreadSanitizer's Go mapping), which shadows only memory below
// 0xe0_0000_0000: Go's heap and the Go module's data. A shared object
// normally loads near 0x7f00_0000_0000, where the detector cannot map
// shadow ("ThreadSanitizer failed to allocate ... (errno: 12)"), so the
// race library is linked at a fixed base address (raceBase) that the
// dynamic loader honours when the range is free. With --static-goshmem
// the program is linked -no-pie for the same reason: the Go data is then
// the executable's, loaded at 0x400000. A race makes the program print
// "WARNING: DATA RACE"; GORACE=halt_on_error=1 makes it exit with status
// 66 (a C main's return does not consult the detector).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	var args []string
	showme, libDir := false, false
	var v variant
	for _, a := range os.Args[1:] {
		switch a {
		case "--showme":
			showme = true
		case "--static-goshmem":
			v.static = true
		case "--lib-dir":
			libDir = true
		case "--race":
			v.race = true
		case "--fabric":
			v.fabric = true
		default:
			args = append(args, a)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	lib, err := ensureLibrary(root, v)
	if err != nil {
		fatal(err)
	}
	if libDir {
		fmt.Println(lib)
		return
	}
	cmd := compileCommand(lib, args, v)
	if showme {
		fmt.Println(strings.Join(cmd, " "))
		return
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "oshcc:", err)
	os.Exit(1)
}

// linking reports whether the compiler will link: not with -c, -E, -S or
// only dependency output, nor with no input at all (cc --version).
func linking(args []string) bool {
	inputs := false
	for _, a := range args {
		switch a {
		case "-c", "-E", "-S", "-M", "-MM", "--version", "-v":
			return false
		}
		if !strings.HasPrefix(a, "-") {
			inputs = true
		}
	}
	return inputs
}

func compileCommand(lib string, args []string, v variant) []string {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	cmd := append(strings.Fields(cc), "-I"+lib+"/include")
	cmd = append(cmd, args...)
	if linking(args) {
		switch {
		case v.static && v.race:
			cmd = append(cmd, "-no-pie", lib+"/libgoshmem.a")
		case v.static:
			cmd = append(cmd, lib+"/libgoshmem.a")
		default:
			cmd = append(cmd, "-L"+lib, "-lgoshmem", "-Wl,-rpath,"+lib)
		}
		if v.static && v.fabric {
			// The archive's cgo objects call libfabric; a shared
			// libgoshmem carries that dependency itself.
			cmd = append(cmd, "-lfabric")
		}
		cmd = append(cmd, "-lpthread", "-lm")
	}
	return cmd
}
