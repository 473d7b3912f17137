package shmem

import (
	"crypto/tls"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/affinity"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
	"github.com/goshmem/shmem/transport/rdma"
)

// Option configures Init and GetUniqueID.
type Option func(*options)

type options struct {
	raw         []Option
	heapSize    int64
	heapLimit   int64 // 0: no growth
	logger      *slog.Logger
	uid         UniqueID
	haveUID     bool
	rank, npes  int
	seeds       []string
	userTLS     *tls.Config
	tlsOff      bool
	network     bool
	busyPoll    time.Duration
	widenTo     []int // SHMEM_CPUS_ALLOWED: world.Config.WidenTo
	timeout     time.Duration
	exitProcess bool
	launch      bootstrap.Launch
	jobSecret   string
	gossipBind  string
	// the data path between hosts: "" or "tcp", or "fabric" with the
	// libfabric provider, domain and node to use (WithFabric)
	rdma                              string
	fabricProv, fabricDom, fabricNode string
	// ports confines every listener to SHMEM_PORT_RANGE
	ports bootstrap.PortRange
	// lockedCallers: WithLockedCallers
	lockedCallers bool
	// failAfter is SHMEM_FAILURE_TIMEOUT: the control lane's silence bound
	failAfter time.Duration
	// a backend that makes the PE (WithBackend); Init then ignores the rest
	backend     core.Backend
	haveBackend bool
	// heapSet: WithHeapSize was given (the environment's size is then not
	// even parsed); opTimeout, hangReport: see WithOpTimeout, WithHangReport
	heapSet       bool
	opTimeout     time.Duration
	hangReport    time.Duration
	requireLaunch bool
	metrics       bool   // WithMetrics
	statics       []byte // WithStatics
	staticsLayout uint64 // WithStaticsLayout
	// announce: what PE 0 prints once the world is up, for OpenSHMEM's
	// SHMEM_VERSION and SHMEM_INFO (startinfo.go); nil: nothing.
	announce                io.Writer
	printVersion, printInfo bool
}

// WithOpTimeout makes every blocking call (waits, locks, barriers,
// collectives, allocation, Finalize) that takes longer than d fail with
// ErrTimeout, naming the call and the PEs it waits on, and in a team
// operation or Finalize the PEs not there yet ("PE 1 has not arrived",
// "PE 1 has not called Finalize"). Default: no limit, since OpenSHMEM
// programs may legitimately wait long; failures of PEs and mismatched
// collectives end waits without it; 0 is that default, and a negative d
// makes Init fail with ErrInvalidArgument.
//
// A PE whose barrier, collective or collective allocation times out gives
// that operation up, and with it the team: its later calls on the team
// fail at once with ErrTimeout, and every other member still in the
// operation, or reaching it or a later operation of the team, fails at
// once with ErrPEFailed naming it ("PE 2 gave up operation 3 (Barrier) of
// team world"), whether it has a timeout or not. A member that completed
// the operation before keeps its result: every member had arrived. A PE
// whose Finalize times out still releases everything and leaves; a
// second Finalize returns the same error. If it is PE 0, which runs the
// world's agreements, the others' Finalize (or allocation) then fails
// with ErrPEFailed naming PE 0, 2 s after it left.
func WithOpTimeout(d time.Duration) Option { return func(o *options) { o.opTimeout = d } }

// WithHangReport makes every call blocked longer than d log, once, at WARN,
// what it is blocked in and on what (the call, the team or word, the PEs),
// and makes SIGQUIT print this PE's report to stderr instead of ending the
// process (shmemrun forwards SIGQUIT to every PE). SHMEM_HANG_REPORT=30s
// does the same. Default off.
func WithHangReport(d time.Duration) Option { return func(o *options) { o.hangReport = d } }

// WithRequireLauncher makes Init fail (ErrBootstrap) when neither a
// launcher's environment nor an option describes a world, instead of
// making a world of one PE; SHMEM_REQUIRE_LAUNCHER=1 does the same. A job
// started the wrong way then fails instead of "passing" on one PE.
func WithRequireLauncher() Option { return func(o *options) { o.requireLaunch = true } }

// WithHeapSize sets the symmetric heap size in bytes; it wins over
// SHMEM_SYMMETRIC_SIZE. Every PE must use the same size.
func WithHeapSize(bytes int64) Option {
	return func(o *options) { o.heapSize, o.heapSet = bytes, true }
}

// WithLogger sends the library's log to l instead of the one the
// SHMEM_LOG_* variables describe.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithUniqueID joins the world that uid names as PE rank of npes
// (aclshmemx_set_attr_uniqueid_args). One process makes uid with
// GetUniqueID and hands its String to the others by any means.
func WithUniqueID(uid UniqueID, rank, npes int) Option {
	return func(o *options) { o.uid, o.haveUID, o.rank, o.npes = uid, true, rank, npes }
}

// WithSeeds forms a world of npes PEs by gossip: seeds are host:port
// addresses of any members already running (this process's own address may
// be among them).
func WithSeeds(seeds []string, npes int) Option {
	return func(o *options) { o.seeds, o.npes = append([]string{}, seeds...), npes }
}

// WithJobSecret sets the secret that admits a process to a gossip-formed
// world (SHMEM_JOB_SECRET does the same): every member must use the same
// one, and it keys the gossip encryption and the job's TLS credentials.
func WithJobSecret(secret string) Option { return func(o *options) { o.jobSecret = secret } }

// WithGossipAddr sets the host:port this member gossips on
// (SHMEM_GOSSIP_ADDR). A seed must bind the address the others know it by;
// other members may leave the port 0.
func WithGossipAddr(hostport string) Option { return func(o *options) { o.gossipBind = hostport } }

// WithTLS makes every connection use cfg, which must hold a certificate
// that the other PEs trust and trust theirs (mutual TLS). LoadTLS builds
// one from PEM files. Without it, connections use TLS 1.3 with credentials
// derived from the job secret.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.userTLS = cfg } }

// WithoutTLS turns TLS off: connections are plain TCP, still authenticated
// by the job secret. It is logged as a warning. Pass it to GetUniqueID too.
func WithoutTLS() Option { return func(o *options) { o.tlsOff = true } }

// WithNetworkOnly makes every peer use the network transport, even one on
// the same host (SHMEM_TRANSPORT=tcp does the same).
func WithNetworkOnly() Option { return func(o *options) { o.network = true } }

// WithFabric makes the data path to PEs on other hosts the libfabric
// provider (RDMA NICs) instead of TCP, like SHMEM_RDMA_PROVIDER=fabric;
// provider names the libfabric provider ("verbs;ofi_rxm", "tcp;ofi_rxm";
// "" keeps SHMEM_FABRIC_PROVIDER, or without it picks the first that
// offers RMA and atomics). The program must be built with cgo and
// -tags goshmem_fabric, and every PE must choose alike. The fabric data
// path is not encrypted, so this is never a default and Init logs a
// warning; the control plane keeps TLS (README, Security).
func WithFabric(provider string) Option {
	return func(o *options) {
		o.rdma = "fabric"
		if provider != "" {
			o.fabricProv = provider
		}
	}
}

// WithTimeout bounds start-up: how long Init waits for the other PEs.
// Default 60 s.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithExitOnGlobalExit makes a GlobalExit anywhere exit this process with
// its status, as shmem_global_exit does in C. Init sets it when started by
// shmemrun; embedders keep the default, an error from every later call.
func WithExitOnGlobalExit() Option { return func(o *options) { o.exitProcess = true } }

// WithLockedCallers tells Init that the PE's calls come from goroutines
// locked to their OS threads: C threads calling in through cgo (the C API
// sets it), or goroutines that called runtime.LockOSThread. Over the
// network a blocking call then polls for its answer without yielding to
// the process's other goroutines for its first tens of microseconds,
// since from a locked goroutine each such yield hands the processor to
// another thread and back. Default off: callers are ordinary goroutines.
func WithLockedCallers() Option { return func(o *options) { o.lockedCallers = true } }

// LoadTLS returns a mutual-TLS 1.3 configuration from PEM files: the CA
// that signs every PE's certificate, this PE's certificate and key, and
// optionally a certificate revocation list. PEs verify each other by the
// CA and by the name "goshmem": every PE's certificate must carry that DNS
// name (PEs are reached by address, and one name for the job keeps the
// certificates independent of where PEs run).
func LoadTLS(caFile, certFile, keyFile, crlFile string) (*tls.Config, error) {
	m, err := secure.LoadPEM(caFile, certFile, keyFile, crlFile)
	if err != nil {
		return nil, err
	}
	return m.Both("goshmem"), nil
}

// defaultBusyPoll is how long a network read polls its socket before it
// parks, unless SHMEM_BUSY_POLL says otherwise. Polling is what OpenSHMEM
// implementations do (UCX over TCP polls always); goshmem bounds it: a poll
// lasts at most this long after the last data, halves while unanswered,
// and rests entirely while the cores are oversubscribed (rdma.pollBudget),
// so an idle or crowded process does not spin. Measured on 2 cores with
// two PE processes: get 8 B 16-20 µs polling vs 45-72 µs parked. The value
// lives in rdma so that references measured in the same mode (shmem-perf's
// tcp_rtt_poll) use the same one.
const defaultBusyPoll = rdma.DefaultBusyPoll

// resolve applies opts over the environment's settings.
func resolve(opts []Option) (*options, error) {
	o := &options{raw: opts, heapSize: DefaultHeapSize, timeout: 60 * time.Second, busyPoll: defaultBusyPoll}
	if v := os.Getenv(EnvSymmetricSizeMax); v != "" {
		n, err := bootstrap.ParseSize(v)
		if err != nil {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, err, "%s=%q", EnvSymmetricSizeMax, v)
		}
		o.heapLimit = n
	}
	o.gossipBind = os.Getenv("SHMEM_GOSSIP_ADDR")
	if v := os.Getenv("SHMEM_INIT_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "SHMEM_INIT_TIMEOUT=%q is not a positive duration", v)
		}
		o.timeout = d
	}
	if v := os.Getenv("SHMEM_BUSY_POLL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Second {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "SHMEM_BUSY_POLL=%q is not a duration in [0, 1s]", v)
		}
		o.busyPoll = d
	}
	if v := os.Getenv(affinity.EnvAllowed); v != "" {
		cpus, err := affinity.ParseList(v)
		if err != nil {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "%s: %v", affinity.EnvAllowed, err)
		}
		o.widenTo = cpus
	}
	switch v := os.Getenv("SHMEM_TRANSPORT"); strings.ToLower(strings.TrimSpace(v)) {
	case "":
	case "tcp":
		o.network = true
	default:
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "SHMEM_TRANSPORT=%q: want tcp (or unset)", v)
	}
	switch o.rdma = os.Getenv("SHMEM_RDMA_PROVIDER"); o.rdma {
	case "", "tcp", "fabric":
	default:
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "SHMEM_RDMA_PROVIDER=%q: want tcp or fabric", o.rdma)
	}
	o.fabricProv, o.fabricDom, o.fabricNode = os.Getenv("SHMEM_FABRIC_PROVIDER"), os.Getenv("SHMEM_FABRIC_DOMAIN"), os.Getenv("SHMEM_FABRIC_NODE")
	ports, err := bootstrap.ParsePortRange(os.Getenv(bootstrap.EnvPortRange))
	if err != nil {
		return nil, err
	}
	o.ports = ports
	if v := os.Getenv("SHMEM_FAILURE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 600*time.Millisecond || d > time.Hour {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "SHMEM_FAILURE_TIMEOUT=%q is not a duration in [600ms, 1h]", v)
		}
		o.failAfter = d
	}
	l, found, err := bootstrap.DetectLaunch(os.Getenv)
	if err != nil {
		return nil, err
	}
	if found {
		o.launch, o.rank, o.npes = l, l.Rank, l.NPEs
		o.exitProcess = l.Source == bootstrap.SourceGoshmem
	}
	if v := os.Getenv("SHMEM_HANG_REPORT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "SHMEM_HANG_REPORT=%q is not a positive duration", v)
		}
		o.hangReport = d
	}
	if o.requireLaunch, err = bootstrap.EnvBool("SHMEM_REQUIRE_LAUNCHER", os.Getenv("SHMEM_REQUIRE_LAUNCHER")); err != nil {
		return nil, errs.As("Init", errs.NoPE, err)
	}
	o.printVersion, o.printInfo = os.Getenv(bootstrap.EnvVersion) != "", os.Getenv(bootstrap.EnvInfo) != ""
	o.announce = os.Stdout
	for _, f := range opts {
		if f != nil {
			f(o)
		}
	}
	if v := os.Getenv(bootstrap.EnvSymmetricSize); v != "" && !o.heapSet {
		n, err := bootstrap.ParseSize(v)
		if err != nil {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, err, "%s=%q", bootstrap.EnvSymmetricSize, v)
		}
		o.heapSize = n
	}
	if o.logger == nil {
		lg, _, err := bootstrap.LoggerFromEnv(os.Getenv, os.Stdout, os.Stderr)
		if err != nil {
			return nil, err
		}
		o.logger = lg
	}
	if o.heapSize <= 0 {
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "heap size %d", o.heapSize)
	}
	if o.opTimeout < 0 {
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "WithOpTimeout(%v): negative (0 is no limit)", o.opTimeout)
	}
	if o.haveUID {
		// A zero or damaged ID would otherwise fail later, on whichever
		// of its fields start-up checks first (its TLS setting).
		if o.uid == (UniqueID{}) {
			return nil, errs.New("Init", o.rank, errs.NoPE, errs.ErrInvalidArgument, "WithUniqueID: the unique ID is zero: take it from GetUniqueID or ParseUniqueID")
		}
		if err := o.uid.Validate(); err != nil {
			return nil, errs.As("Init", o.rank, err)
		}
	}
	return o, nil
}
