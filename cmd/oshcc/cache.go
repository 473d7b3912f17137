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

// sourceHash hashes what libgoshmem is built from: the module's Go, C and
// header files (tests and testdata aside), go.mod, go.sum and the Go
// version.
func sourceHash(root string) (string, error) {
	h := sha256.New()
	goVersion, err := exec.Command("go", "version").Output()
	if err != nil {
		return "", fmt.Errorf("go: %v", err)
	}
	h.Write(goVersion)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples" || name == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if strings.HasSuffix(name, "_test.go") || (ext != ".go" && ext != ".c" && ext != ".h" && name != "go.mod" && name != "go.sum") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureLibrary returns the cache directory holding libgoshmem and its
// headers for the current sources, building them when missing. A build
// goes to a fresh directory renamed into place, so concurrent oshcc runs
// never see half a library.
func ensureLibrary(root string, static bool) (string, error) {
	key, err := sourceHash(root)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "goshmem", "lib-"+key)
	libName, mode := "libgoshmem.so", "c-shared"
	if static {
		libName, mode = "libgoshmem.a", "c-archive"
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
	fmt.Fprintf(os.Stderr, "oshcc: building %s (go build -buildmode=%s) into %s\n", libName, mode, dir)
	build := exec.Command("go", "build", "-buildmode="+mode, "-o", filepath.Join(tmp, libName), "./capi")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building libgoshmem: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "include"), 0o755); err != nil {
		return "", err
	}
	for _, h := range []string{"shmem.h", "shmem_gen.h", "shmemx.h"} {
		b, err := os.ReadFile(filepath.Join(root, "capi", "include", h))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, "include", h), b, 0o644); err != nil {
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
