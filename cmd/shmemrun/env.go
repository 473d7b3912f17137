package main

import (
	"strconv"
	"strings"

	"github.com/goshmem/shmem/bootstrap"
)

// EnvInitTimeout carries -timeout to the PEs.
const EnvInitTimeout = "SHMEM_INIT_TIMEOUT"

// launchVars are the variables childEnv owns: an inherited value would
// contradict the launch (a stale SHMEM_UID_FILE from an outer job, say).
var launchVars = []string{
	"SHMEM_RANK", "SHMEM_NPES", "SHMEM_LOCAL_RANK", "SHMEM_LOCAL_SIZE",
	bootstrap.EnvUniqueID, bootstrap.EnvUIDFile,
}

// childEnv returns PE rank's environment: base without the launch
// variables, then this launch's rank, size, local rank and size (all PEs
// run on this host), unique ID and the settings c asks for.
func childEnv(base []string, c config, uid string, rank int) []string {
	drop := append([]string{}, launchVars...)
	if c.Heap != "" {
		drop = append(drop, bootstrap.EnvSymmetricSize)
	}
	if c.Network {
		drop = append(drop, "SHMEM_TRANSPORT")
	}
	if c.Timeout > 0 {
		drop = append(drop, EnvInitTimeout)
	}
	env := make([]string, 0, len(base)+len(drop))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(drop, k) {
			env = append(env, kv)
		}
	}
	np := strconv.Itoa(c.NP)
	env = append(env,
		"SHMEM_RANK="+strconv.Itoa(rank), "SHMEM_NPES="+np,
		"SHMEM_LOCAL_RANK="+strconv.Itoa(rank), "SHMEM_LOCAL_SIZE="+np,
		bootstrap.EnvUniqueID+"="+uid)
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
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
