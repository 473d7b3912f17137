package bootstrap

import (
	"net"
	"strconv"
	"strings"

	"github.com/goshmem/shmem/internal/errs"
)

// MaxNPEs is goshmem's one limit on a world's size, enforced here (the
// environment), by shmemrun's -np, by the rendezvous and by gossip: a typo
// such as WORLD_SIZE=4e9 is an error rather than a giant allocation later,
// and a world that one part accepts is never refused by another. 65536 PEs
// keep rank 0's rendezvous table bounded (MaxRecord per PE).
const MaxNPEs = 1 << 16

// Launch sources, in the order DetectLaunch tries them.
const (
	SourceGoshmem  = "goshmem"
	SourceSlurm    = "slurm"
	SourceOpenMPI  = "openmpi"
	SourcePMI      = "pmi"
	SourceTorchrun = "torchrun"
)

// The rendezvous variables, read whichever launcher set the rank.
const (
	EnvUniqueID   = "SHMEM_UNIQUE_ID"
	EnvUIDFile    = "SHMEM_UID_FILE"
	EnvJobSecret  = "SHMEM_JOB_SECRET"
	EnvMasterAddr = "MASTER_ADDR"
	EnvMasterPort = "MASTER_PORT"
)

// Launch is what a job launcher told this process.
type Launch struct {
	// Source is the launcher whose variables gave the rank: SourceGoshmem,
	// SourceSlurm, SourceOpenMPI, SourcePMI or SourceTorchrun.
	Source string
	// Rank is this process's PE number, 0 <= Rank < NPEs.
	Rank int
	// NPEs is the number of PEs in the job, 1..MaxNPEs.
	NPEs int
	// LocalRank is the rank among the PEs on this node, or -1 when the
	// launcher does not say.
	LocalRank int
	// LocalSize is the number of PEs on this node, or 0 when the launcher
	// does not say.
	LocalSize int
	// UID is SHMEM_UNIQUE_ID, already checked to parse; empty when unset.
	UID string
	// UIDFile is SHMEM_UID_FILE: a file PE 0 writes the unique ID to and the
	// others read; empty when unset.
	UIDFile string
	// MasterAddr is MASTER_ADDR:MASTER_PORT joined (torchrun's rendezvous,
	// honoured for any launcher); empty when MASTER_ADDR is unset.
	MasterAddr string
	// Secret is SHMEM_JOB_SECRET, passed through unchanged; empty when unset.
	Secret string
	// SessionID is SHMEM_UID_SESSION_ID: with no other rendezvous, rank 0
	// listens there and every rank derives the ID (SessionUniqueID).
	SessionID string
	// StoreTLSOff is SMEM_CONF_STORE_TLS_ENABLE=0: CANN SHMEM's scripts'
	// way of turning TLS off for the session start-up.
	StoreTLSOff bool
}

// launcherVars names one launcher's variables; an empty name means the
// launcher has none for that field.
type launcherVars struct {
	source                           string
	rank, npes, localRank, localSize string
}

// The variables goshmem's own launchers (shmemrun, internal/launch) set.
const (
	EnvRank      = "SHMEM_RANK"
	EnvNPEs      = "SHMEM_NPES"
	EnvLocalRank = "SHMEM_LOCAL_RANK"
	EnvLocalSize = "SHMEM_LOCAL_SIZE"
)

var launchers = [...]launcherVars{
	{SourceGoshmem, EnvRank, EnvNPEs, EnvLocalRank, EnvLocalSize},
	{SourceSlurm, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", ""},
	{SourceOpenMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
	{SourcePMI, "PMI_RANK", "PMI_SIZE", "", ""},
	{SourceTorchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
}

func launchErr(format string, args ...any) error {
	return errs.New("DetectLaunch", errs.NoPE, errs.NoPE, errs.ErrBootstrap, format, args...)
}

// DetectLaunch reads the launcher's variables. The first launcher whose
// rank variable is set wins, in this order: goshmem's own launcher
// (SHMEM_RANK), Slurm (SLURM_PROCID), Open MPI (OMPI_COMM_WORLD_RANK), PMI
// (PMI_RANK), torchrun (RANK). found is false, with a nil error, when none
// is set and no goshmem variable is either: the caller then runs a world of
// one PE. Errors wrap errs.ErrBootstrap and name the variable: a number that
// does not parse, a missing size, a rank outside [0, npes), SHMEM_NPES or
// SHMEM_LOCAL_* without SHMEM_RANK (even under another launcher),
// SHMEM_UNIQUE_ID or SHMEM_UID_FILE with no rank from any launcher, a
// SHMEM_UNIQUE_ID that does not parse, a MASTER_PORT that is not a port.
func DetectLaunch(getenv func(string) string) (l Launch, found bool, err error) {
	get := func(k string) string {
		if k == "" {
			return ""
		}
		return strings.TrimSpace(getenv(k))
	}
	if get(launchers[0].rank) == "" {
		// goshmem's own variables are never ignored: a half-set goshmem
		// launch under another launcher is a mistake worth stopping for.
		for _, k := range []string{launchers[0].npes, launchers[0].localRank, launchers[0].localSize} {
			if v := get(k); v != "" {
				return Launch{}, false, launchErr("%s=%s is set but %s is not", k, v, launchers[0].rank)
			}
		}
	}
	var lv launcherVars
	for _, c := range launchers {
		if get(c.rank) != "" {
			lv, found = c, true
			break
		}
	}
	if !found {
		for _, k := range []string{EnvUniqueID, EnvUIDFile} {
			if get(k) != "" {
				return Launch{}, false, launchErr("%s is set but no launcher gave this process a rank (set SHMEM_RANK, or run under Slurm, Open MPI, PMI or torchrun)", k)
			}
		}
		return Launch{}, false, nil
	}

	l = Launch{Source: lv.source, LocalRank: -1}
	if l.Rank, err = envInt(lv.rank, get(lv.rank), 0, MaxNPEs-1); err != nil {
		return Launch{}, false, err
	}
	if get(lv.npes) == "" {
		return Launch{}, false, launchErr("%s=%s is set but %s is not", lv.rank, get(lv.rank), lv.npes)
	}
	if l.NPEs, err = envInt(lv.npes, get(lv.npes), 1, MaxNPEs); err != nil {
		return Launch{}, false, err
	}
	if l.Rank >= l.NPEs {
		return Launch{}, false, launchErr("%s=%d is not below %s=%d", lv.rank, l.Rank, lv.npes, l.NPEs)
	}
	if v := get(lv.localSize); v != "" {
		if l.LocalSize, err = envInt(lv.localSize, v, 1, l.NPEs); err != nil {
			return Launch{}, false, err
		}
	}
	if v := get(lv.localRank); v != "" {
		hi := l.NPEs - 1
		if l.LocalSize > 0 {
			hi = l.LocalSize - 1
		}
		if l.LocalRank, err = envInt(lv.localRank, v, 0, hi); err != nil {
			return Launch{}, false, err
		}
	}

	if l.UID = get(EnvUniqueID); l.UID != "" {
		if _, perr := ParseUniqueID(l.UID); perr != nil {
			return Launch{}, false, launchErr("%s: %v", EnvUniqueID, perr)
		}
	}
	l.UIDFile = get(EnvUIDFile)
	l.Secret = get(EnvJobSecret)
	l.SessionID = get(EnvUIDSessionID)
	if l.StoreTLSOff, err = parseStoreTLS(get(EnvStoreTLSEnable)); err != nil {
		return Launch{}, false, err
	}
	if l.MasterAddr, err = masterAddr(get(EnvMasterAddr), get(EnvMasterPort)); err != nil {
		return Launch{}, false, err
	}
	return l, true, nil
}

// envInt parses a decimal integer variable and checks lo <= n <= hi.
func envInt(name, v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, launchErr("%s=%q is not a decimal integer", name, v)
	}
	if n < lo || n > hi {
		return 0, launchErr("%s=%d is outside [%d, %d]", name, n, lo, hi)
	}
	return n, nil
}

// masterAddr joins torchrun's MASTER_ADDR and MASTER_PORT, checking both.
func masterAddr(host, port string) (string, error) {
	if host == "" {
		if port != "" {
			return "", launchErr("%s=%s is set but %s is not", EnvMasterPort, port, EnvMasterAddr)
		}
		return "", nil
	}
	if port == "" {
		return "", launchErr("%s=%s is set but %s is not", EnvMasterAddr, host, EnvMasterPort)
	}
	if _, err := parsePort(port, false); err != nil {
		return "", launchErr("%s: %v", EnvMasterPort, err)
	}
	hp := net.JoinHostPort(host, port)
	if _, err := parseHostPort(hp, false); err != nil {
		return "", launchErr("%s: %v", EnvMasterAddr, err)
	}
	return hp, nil
}
