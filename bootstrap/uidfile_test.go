package bootstrap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// TestWriteUniqueIDFileLeavesAPlantedTempAlone: another user who can
// write SHMEM_UID_FILE's directory (/tmp) and plants a world-writable
// path+".tmp" used to receive the job secret in it: rank 0 truncated and
// filled the planted file (0600 applies only to a file it creates), then
// renamed it, so the file every rank read was the other user's. Checked
// with two users in a sticky directory: the secret landed in the other
// user's file, and only the rename failed. Now the ID goes to a file
// rank 0 creates exclusively, under a random name.
func TestWriteUniqueIDFileLeavesAPlantedTempAlone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.uid")
	planted := path + ".tmp"
	if err := os.WriteFile(planted, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	uid, err := NewUniqueID("127.0.0.1:4000", false, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteUniqueIDFile(path, uid); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(planted); err != nil || len(b) != 0 {
		t.Fatalf("the planted %s holds %q (%v), want it untouched and empty", planted, b, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, m)
	}
	got, err := ReadUniqueIDFile(context.Background(), path, time.Minute)
	if err != nil || got != uid {
		t.Fatalf("read %v, %v; want %v", got, err, uid)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d files in the directory, want the ID and the planted file: %v", len(ents), ents)
	}
}

// TestReadUniqueIDFileRefusesForeignFiles: a rank reads the ID only from
// a regular file of its own user, no longer than an ID; another fails
// at once with ErrBootstrap saying why. Before, a rank read whatever
// was at the path: another user's file with an ID of its own (the rank
// joined that user's world), or a symlink to /dev/zero, read without end
// (120 MB in 3 s, until the memory ran out).
func TestReadUniqueIDFileRefusesForeignFiles(t *testing.T) {
	uid, err := NewUniqueID("127.0.0.1:4000", false, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	token := uid.String() + "\n"
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, path string)
		says  string
	}{
		{"a symlink to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"a long file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(token+strings.Repeat("x", 1<<20)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "longer than any unique ID"},
		{"another user's file", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			if err := os.WriteFile(path, []byte(token), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "owned by uid 65534"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "job.uid")
			c.plant(t, path)
			got, err := ReadUniqueIDFile(context.Background(), path, time.Minute)
			if !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), EnvUIDFile) {
				t.Fatalf("read %v, %v; want ErrBootstrap naming %s and saying %q", got, err, EnvUIDFile, c.says)
			}
		})
	}
}
