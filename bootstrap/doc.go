// Package bootstrap turns a process's environment into the facts that
// shmem.Init, the launcher and shmem-config need before any network traffic:
// the unique ID that names a job's rendezvous point, the address the rank-0
// rendezvous listener should bind, the rank and size a job launcher assigned,
// the symmetric heap size, and the logger.
//
// Everything here is pure and deterministic: environment variables arrive
// through a getenv function and network interfaces as a fabricated []Iface,
// so every rule is testable without touching the machine. The only I/O is in
// SystemIfaces (reads the host's interfaces), NewUniqueID (reads
// crypto/rand) and LoggerFromEnv (may create a log file).
//
// Every error wraps a goshmem sentinel (errs.ErrInvalidArgument for malformed
// values handed over by the caller, errs.ErrBootstrap for a launch
// environment that cannot describe a world) and names the variable or field
// that was wrong.
package bootstrap
