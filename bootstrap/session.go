package bootstrap

import (
	"strings"

	"github.com/goshmem/shmem/internal/errs"
)

// EnvStoreTLSEnable is CANN SHMEM's switch for its configuration store's
// TLS; its scripts set it to 0. goshmem reads it only for the session
// start-up (SessionUniqueID), where it is how a CANN SHMEM script says
// "no TLS".
const EnvStoreTLSEnable = "SMEM_CONF_STORE_TLS_ENABLE"

// parseStoreTLS reads SMEM_CONF_STORE_TLS_ENABLE: off is true for 0 or
// false; unset, 1 and true leave TLS on.
func parseStoreTLS(v string) (off bool, err error) {
	switch strings.ToLower(v) {
	case "", "1", "true", "on":
		return false, nil
	case "0", "false", "off":
		return true, nil
	}
	return false, launchErr("%s=%q: want 0 or 1", EnvStoreTLSEnable, v)
}

// sessionSecretPrefix keys the secret of a session without a job secret,
// so that two sessions at different addresses never share one.
const sessionSecretPrefix = "goshmem session without job secret\x00"

// SessionUniqueID is the unique ID of CANN SHMEM's script start-up: every
// rank is given only SHMEM_UID_SESSION_ID (rank 0's listening address)
// and a rank and size, and all derive the same ID from it. The job secret
// is l.Secret (SHMEM_JOB_SECRET), which keys TLS as in the torchrun-style
// start-up. Without one, TLS must be off by the user's word — tlsOff
// (shmem.WithoutTLS, aclshmemx_set_conf_store_tls(false)) or
// SMEM_CONF_STORE_TLS_ENABLE=0 — and the world is then open to any
// process that can reach the address. With neither, the error says what
// to set.
func SessionUniqueID(l Launch, tlsOff bool) (UniqueID, error) {
	off := tlsOff || l.StoreTLSOff
	if _, err := parseHostPort(l.SessionID, false); err != nil {
		return UniqueID{}, errs.New("Init", l.Rank, 0, errs.ErrInvalidArgument, "%s=%q: %v (rank 0 listens there, so the port cannot be 0)", EnvUIDSessionID, l.SessionID, err)
	}
	switch {
	case l.Secret != "":
		return UniqueIDFromSecret(l.SessionID, l.Secret, !off)
	case off:
		return UniqueIDFromSecret(l.SessionID, sessionSecretPrefix+l.SessionID, false)
	}
	return UniqueID{}, errs.New("Init", l.Rank, 0, errs.ErrBootstrap,
		"%s gave rank %d of %d and %s=%s but no job secret: set %s to the same secret on every rank (TLS on), or turn TLS off with %s=0 (or shmem.WithoutTLS, aclshmemx_set_conf_store_tls(false))",
		l.Source, l.Rank, l.NPEs, EnvUIDSessionID, l.SessionID, EnvJobSecret, EnvStoreTLSEnable)
}
