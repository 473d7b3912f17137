package shmem

import (
	"fmt"

	"github.com/goshmem/shmem/bootstrap"
)

// minChosenSecretLen is the shortest job secret a user chooses
// (SHMEM_JOB_SECRET, WithJobSecret) that Init takes without a warning.
// Why it matters: the job's TLS certificate and gossip key are fast
// hashes of the secret, and a PE shows its certificate to anyone who
// opens a TLS connection to it, so a stranger can test guesses of a short
// or word-like secret offline, as fast as it can hash. Sixteen random
// characters are out of reach; length alone cannot tell a random secret
// from a phrase, hence "random" in the advice.
const minChosenSecretLen = 16

// warnWeakSecret logs a warning for a job secret the user chose (source
// names where it came from) that is shorter than minChosenSecretLen.
func warnWeakSecret(o *options, source, secret string) {
	if secret == "" || len(secret) >= minChosenSecretLen {
		return
	}
	o.logger.Warn(fmt.Sprintf("the job secret from %s is %d bytes: anyone who can connect to a PE receives the job's certificate, derived from the secret, and can test guesses of it offline, then join the world and read and write every heap; use at least %d random characters (openssl rand -hex 16)",
		source, len(secret), minChosenSecretLen))
}

// warnNoSecret logs the warning of a session start-up with TLS off and no
// job secret (bootstrap.SessionUniqueID): its credentials derive from
// rank 0's address alone.
func warnNoSecret(o *options, addr string) {
	o.logger.Warn(fmt.Sprintf("no job secret and TLS off: the credentials derive from %s=%s alone, so any process that can reach %s can join this world and read and write every heap; set %s on every rank",
		bootstrap.EnvUIDSessionID, addr, addr, bootstrap.EnvJobSecret))
}
