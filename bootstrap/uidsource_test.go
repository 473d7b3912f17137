package bootstrap

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// TestUniqueIDFromSecret: every rank derives the same ID from the same
// address and secret, another secret gives another ID, and the pin is set
// exactly when TLS is on.
func TestUniqueIDFromSecret(t *testing.T) {
	a, err := UniqueIDFromSecret("10.0.0.1:29500", "s3cret", true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := UniqueIDFromSecret("10.0.0.1:29500", "s3cret", true)
	if err != nil || a != b {
		t.Fatalf("second derivation %v, %v: want %v", b, err, a)
	}
	if c, _ := UniqueIDFromSecret("10.0.0.1:29500", "other", true); c.Secret == a.Secret {
		t.Error("another secret derived the same ID")
	}
	if a.Pin == ([32]byte{}) {
		t.Error("TLS on but no pin")
	}
	off, err := UniqueIDFromSecret("10.0.0.1:29500", "s3cret", false)
	if err != nil || off.Pin != ([32]byte{}) || off.TLS {
		t.Errorf("TLS off: %+v, %v", off, err)
	}
}

// TestUniqueIDFile: what rank 0 writes, the others read back; a file that
// never appears ends the wait with ErrTimeout.
func TestUniqueIDFile(t *testing.T) {
	dir := t.TempDir()
	uid, err := UniqueIDFromSecret("127.0.0.1:4000", "x", true)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "uid")
	if err := WriteUniqueIDFile(path, uid); err != nil {
		t.Fatal(err)
	}
	got, err := ReadUniqueIDFile(context.Background(), path, time.Minute)
	if err != nil || got != uid {
		t.Fatalf("read %v, %v; want %v", got, err, uid)
	}
	_, err = ReadUniqueIDFile(context.Background(), filepath.Join(dir, "missing"), 0)
	if !errors.Is(err, errs.ErrTimeout) {
		t.Errorf("missing file: %v, want ErrTimeout", err)
	}
}
