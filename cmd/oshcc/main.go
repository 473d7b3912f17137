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
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	var args []string
	showme, static, libDir := false, false, false
	for _, a := range os.Args[1:] {
		switch a {
		case "--showme":
			showme = true
		case "--static-goshmem":
			static = true
		case "--lib-dir":
			libDir = true
		default:
			args = append(args, a)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	lib, err := ensureLibrary(root, static)
	if err != nil {
		fatal(err)
	}
	if libDir {
		fmt.Println(lib)
		return
	}
	cmd := compileCommand(lib, args, static)
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

func compileCommand(lib string, args []string, static bool) []string {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	cmd := append(strings.Fields(cc), "-I"+lib+"/include")
	cmd = append(cmd, args...)
	if linking(args) {
		if static {
			cmd = append(cmd, lib+"/libgoshmem.a", "-lpthread", "-lm")
		} else {
			cmd = append(cmd, "-L"+lib, "-lgoshmem", "-Wl,-rpath,"+lib, "-lpthread", "-lm")
		}
	}
	return cmd
}
