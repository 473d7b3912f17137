package bootstrap

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// PinJobCert sets uid's Pin to the job certificate that its Secret
// derives (the certificate every PE of the job presents), or clears it
// when TLS is off.
func PinJobCert(uid *UniqueID) error {
	uid.Pin = [32]byte{}
	if !uid.TLS {
		return nil
	}
	_, pin, err := secure.JobCert(uid.Secret[:])
	uid.Pin = pin
	return err
}

// UniqueIDFromSecret returns the ID every rank of a torchrun-style or
// gossip-formed job derives alike from the rendezvous address and the job
// secret it was given: nothing has to be handed around.
func UniqueIDFromSecret(addr, secret string, useTLS bool) (UniqueID, error) {
	uid := UniqueID{Version: UniqueIDVersion, Addr: addr, Secret: sha256.Sum256([]byte("goshmem job secret v1\x00" + secret)), TLS: useTLS}
	if err := PinJobCert(&uid); err != nil {
		return uid, err
	}
	return uid, uid.Validate()
}

// WriteUniqueIDFile publishes uid at path for the other ranks of a job
// (SHMEM_UID_FILE): written beside it, in a file created exclusively under
// a random name, and renamed, so a reader never sees half an ID. The file
// is readable by its owner only, as the ID is the job's secret.
func WriteUniqueIDFile(path string, uid UniqueID) error {
	tmp, err := writeUIDTemp(path, []byte(uid.String()+"\n"))
	if err != nil {
		return errs.New("Init", 0, errs.NoPE, errs.ErrBootstrap, "writing the unique ID to %s: %v", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return errs.New("Init", 0, errs.NoPE, errs.ErrBootstrap, "writing the unique ID to %s: %v", path, err)
	}
	return nil
}

// ReadUniqueIDFile waits until rank 0 has published an ID at path
// (WriteUniqueIDFile) and parses it. It polls, backing off to 100 ms, and
// gives up after timeout (ErrTimeout) or when ctx ends (ErrBootstrap).
// It takes only a regular file of this process's user, no longer than an
// ID: another one at path fails at once (ErrBootstrap), as another user
// could have planted it.
func ReadUniqueIDFile(ctx context.Context, path string, timeout time.Duration) (UniqueID, error) {
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		b, err := readUIDFile(path)
		if errors.Is(err, errForeignUIDFile) {
			return UniqueID{}, errs.New("Init", errs.NoPE, 0, errs.ErrBootstrap, "%s: %v", EnvUIDFile, err)
		}
		if err == nil && len(b) > 0 {
			return ParseUniqueID(string(trimNL(b)))
		}
		if time.Now().After(deadline) {
			return UniqueID{}, errs.New("Init", errs.NoPE, 0, errs.ErrTimeout, "PE 0 wrote no unique ID to %s within %v", path, timeout)
		}
		select {
		case <-ctx.Done():
			return UniqueID{}, errs.New("Init", errs.NoPE, 0, errs.ErrBootstrap, "%v", ctx.Err())
		case <-time.After(delay):
		}
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
