package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

const modulePath = "github.com/goshmem/shmem"

// moduleRoot finds goshmem's sources: $GOSHMEM_SRC, else the checkout
// this command was built from, else the module as go resolves it here.
func moduleRoot() (string, error) {
	if d := os.Getenv("GOSHMEM_SRC"); d != "" {
		return d, nil
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		d := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if _, err := os.Stat(filepath.Join(d, "capi", "main.go")); err == nil {
			return d, nil
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", modulePath).Output()
	if err != nil {
		return "", fmt.Errorf("cannot find goshmem's sources (set GOSHMEM_SRC): %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// headers are the C API's headers, as programs include them (relative to
// capi/include and to the include directory oshcc passes with -I).
var headers = []string{"shmem.h", "shmem_gen.h", "shmemx.h", "mpp/shmem.h", "mpp/shmemx.h"}

// sourceHash hashes what libgoshmem (variant v) is built from: the Go, C
// and header files that v's build compiles in the module's packages ./capi
// imports (as go list reports them for v's build tags), the C API's
// headers, go.mod, go.sum and the Go version. Only those: C programs kept
// inside the checkout, or edits to packages the library does not link,
// must not rebuild it. Dependencies outside the module are fixed by
// go.sum.
func sourceHash(root string, v variant) (string, error) {
	h := sha256.New()
	goVersion, err := exec.Command("go", "version").Output()
	if err != nil {
		return "", fmt.Errorf("go: %v", err)
	}
	h.Write(goVersion)
	// One line a package: its directory, then the files v's build
	// compiles (tests are never among them).
	const format = "{{.Dir}}{{range .GoFiles}}\t{{.}}{{end}}{{range .CgoFiles}}\t{{.}}{{end}}" +
		"{{range .CFiles}}\t{{.}}{{end}}{{range .HFiles}}\t{{.}}{{end}}"
	args := []string{"list", "-deps", "-f", format}
	if v.fabric {
		args = append(args, "-tags", fabricTag)
	}
	if v.race {
		args = append(args, "-race") // files under //go:build race
	}
	list := exec.Command("go", append(args, "./capi")...)
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("go list ./capi in %s: %v", root, err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if rel, err := filepath.Rel(root, f[0]); err != nil || strings.HasPrefix(rel, "..") {
			continue // outside the module: go.sum fixes it
		}
		for _, name := range f[1:] {
			files = append(files, filepath.Join(f[0], name))
		}
	}
	include := filepath.Join(root, "capi", "include")
	err = filepath.WalkDir(include, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && filepath.Ext(path) == ".h" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, name := range append([]string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}, files...) {
		if err := hashFile(h, root, name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// hashFile adds path's name relative to root and its bytes to h.
func hashFile(h io.Writer, root, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rel, _ := filepath.Rel(root, path)
	fmt.Fprintf(h, "%s\x00", rel)
	_, err = io.Copy(h, f)
	return err
}

// variant is which libgoshmem a command wants: shared or static, plain or
// race-built, with or without the libfabric provider.
type variant struct{ static, race, fabric bool }

// fabricTag is the build tag that puts the libfabric provider
// (transport/rdma/fabric, cgo) into libgoshmem.
const fabricTag = "goshmem_fabric"

// raceBase is where the race-built libgoshmem.so is linked to load: low
// enough for the race detector's shadow (below 0xe0_0000_0000), above
// where a non-PIE executable and its brk heap start (0x400000), and far
// below the kernel's mmap area. The library spans about 50 MiB.
const raceBase = "0x40000000"

// buildArgs is the go build command line for v, writing out.
func (v variant) buildArgs(out string) []string {
	mode := "c-shared"
	if v.static {
		mode = "c-archive"
	}
	args := []string{"build", "-buildmode=" + mode}
	if v.fabric {
		args = append(args, "-tags", fabricTag)
	}
	if v.race {
		args = append(args, "-race")
		if !v.static {
			args = append(args, "-ldflags=-extldflags=-Wl,-Ttext-segment="+raceBase)
		}
	}
	return append(args, "-o", out, "./capi")
}

// ensureLibrary returns the cache directory holding libgoshmem and its
// headers for the current sources, building them when missing. A build
// goes to a fresh directory renamed into place, so concurrent oshcc runs
// never see half a library.
func ensureLibrary(root string, v variant) (string, error) {
	key, err := sourceHash(root, v)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "goshmem", "lib-"+key)
	if v.fabric {
		dir += "-fabric"
	}
	if v.race {
		dir += "-race"
	}
	libName := "libgoshmem.so"
	if v.static {
		libName = "libgoshmem.a"
	}
	if _, err := os.Stat(filepath.Join(dir, libName)); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	args := v.buildArgs(filepath.Join(tmp, libName))
	fmt.Fprintf(os.Stderr, "oshcc: building %s (go %s) into %s\n", libName, strings.Join(args[:len(args)-3], " "), dir)
	build := exec.Command("go", args...)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building libgoshmem: %v", err)
	}
	for _, h := range headers {
		b, err := os.ReadFile(filepath.Join(root, "capi", "include", h))
		if err != nil {
			return "", err
		}
		dst := filepath.Join(tmp, "include", h)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return "", err
		}
	}
	os.Remove(filepath.Join(tmp, strings.TrimSuffix(libName, filepath.Ext(libName))+".h")) // cgo's export header: internal
	if err := os.Rename(tmp, dir); err != nil {
		// Another oshcc may have finished first, or the directory holds the
		// other variant: move just the library in.
		if _, serr := os.Stat(dir); serr != nil {
			return "", err
		}
		if err := os.Rename(filepath.Join(tmp, libName), filepath.Join(dir, libName)); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return dir, nil
}
