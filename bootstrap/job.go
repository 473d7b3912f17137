package bootstrap

import (
	"crypto/sha256"
	"encoding/hex"
)

// JobName returns the name under which a job's shared-memory segments and
// other per-job resources are created: derived from the secret, so every
// process of the job (and its launcher) computes it, and two jobs never
// share one.
func (u UniqueID) JobName() string {
	h := sha256.Sum256(append([]byte("goshmem job name v1"), u.Secret[:]...))
	return hex.EncodeToString(h[:8])
}
