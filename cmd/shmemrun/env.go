package main

import (
	"strings"

	"github.com/goshmem/shmem/bootstrap"
)

// EnvInitTimeout carries -timeout to the PEs.
const EnvInitTimeout = "SHMEM_INIT_TIMEOUT"

// settings returns the variables the command line gives every PE, beside
// the launch's own (rank, size, unique ID): without a flag, the caller's
// value passes through.
func settings(c config) []string {
	var env []string
	if c.Heap != "" {
		env = append(env, bootstrap.EnvSymmetricSize+"="+c.Heap)
	}
	if c.Network {
		env = append(env, "SHMEM_TRANSPORT=tcp")
	}
	if c.Timeout > 0 {
		env = append(env, EnvInitTimeout+"="+c.Timeout.String())
	}
	return env
}

// sessionDefault is the SHMEM_UID_SESSION_ID shmemrun uses when the user
// chose no listen address: all PEs are on this host, so loopback with a
// free port always works and exposes nothing.
const sessionDefault = "127.0.0.1:0"

// needsSessionDefault reports whether the user left the rendezvous address
// to shmemrun (neither SHMEM_UID_SESSION_ID nor SHMEM_UID_SOCK_IFNAME set).
func needsSessionDefault(getenv func(string) string) bool {
	return strings.TrimSpace(getenv(bootstrap.EnvUIDSessionID)) == "" &&
		strings.TrimSpace(getenv(bootstrap.EnvUIDSockIfname)) == ""
}
