package shmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/pestatus"
	"github.com/goshmem/shmem/internal/world"
)

// DefaultHeapSize is each PE's symmetric heap when neither WithHeapSize nor
// SHMEM_SYMMETRIC_SIZE says otherwise. The heap is mapped lazily, so an
// unused heap costs address space, not memory.
const DefaultHeapSize = 64 << 20

// Init joins the world that the options or the environment describe and
// returns this process's PE (shmem_init, aclshmemx_init_attr):
//   - WithUniqueID: the CANN SHMEM unique-ID start-up;
//   - WithSeeds: a world formed by gossip;
//   - else the launcher's environment (shmemrun, Slurm, Open MPI, PMI,
//     torchrun; see the README's table), which names a unique ID, a file
//     that carries one, or a master address and job secret;
//   - else a world of this one PE.
//
// Init blocks until every PE has joined, ctx is done, or the start-up
// timeout passes (ErrBootstrap or ErrTimeout naming the missing ranks), or
// a PE that had joined fails (ErrPEFailed naming it). An Init that ctx
// ended wraps ErrBootstrap and ctx's error: context.Canceled, or
// context.DeadlineExceeded when its deadline ended it. A failed Init
// returns once every goroutine it started has ended: a gossip Init cuts
// its joins and messages in flight and waits for a gossip probe in flight
// (up to 0.5 s, longer while the host is loaded).
func Init(ctx context.Context, opts ...Option) (*PE, error) {
	if b, ok := backendOf(opts); ok {
		return attach(ctx, b)
	}
	o, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	// A PE whose launcher (shmemrun) died must not run on orphaned.
	if err := bootstrap.CheckLauncher(os.Getenv); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// ErrBootstrap as well as ctx's error, as a start-up ended later is.
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, fmt.Errorf("%w: %w", errs.ErrBootstrap, err),
			"start-up abandoned before it began: the context was already done")
	}
	if o.seeds != nil {
		return joinGossip(ctx, o)
	}
	if !o.haveUID && o.npes <= 1 {
		if o.requireLaunch && o.launch.Source == "" {
			return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrBootstrap,
				"no launcher's environment and no world option (WithUniqueID, WithSeeds), and a launcher is required (WithRequireLauncher or SHMEM_REQUIRE_LAUNCHER=1): start the program with shmemrun")
		}
		if o.launch.Source == "" {
			// Allowed by OpenSHMEM, but a job started the wrong way would
			// otherwise "pass" silently on one PE.
			o.logger.Info("no launcher found: running as a world of one PE (SHMEM_REQUIRE_LAUNCHER=1 makes this an error)")
		}
		w, err := core.NewLocalWorld(core.LocalConfig{NPEs: 1, HeapSize: int(o.heapSize), HeapLimit: int(o.heapLimit), Logger: o.logger, CloseWithLastPE: true, OpTimeout: o.opTimeout, Metrics: o.metrics, PathKind: core.PathShm})
		if err != nil {
			return nil, err
		}
		return configured(newPE(w.PEs[0]), o), nil
	}
	if !o.haveUID {
		if o.uid, err = uidFromLaunch(ctx, o); err != nil {
			return nil, err
		}
		// A launcher's ID carries the job's TLS decision (shmemrun
		// --no-tls); the program need not repeat it.
		o.tlsOff = o.tlsOff || !o.uid.TLS
	}
	return joinProcesses(ctx, o)
}

func joinProcesses(ctx context.Context, o *options) (*PE, error) {
	return joinWith(ctx, o, nil)
}

func gossipConfig(o *options, hint int) *world.GossipConfig {
	return &world.GossipConfig{Seeds: o.seeds, Bind: o.gossipBind, RankHint: hint}
}

func joinWith(ctx context.Context, o *options, gossip *world.GossipConfig) (*PE, error) {
	cfg := world.Config{Gossip: gossip,
		UID: o.uid, Rank: o.rank, NPEs: o.npes, HeapSize: o.heapSize, HeapLimit: o.heapLimit, Metrics: o.metrics, Statics: o.statics, StaticsLayout: o.staticsLayout, Network: o.network, BusyPoll: o.busyPoll, LockedCallers: o.lockedCallers, WidenTo: o.widenTo,
		HostID: os.Getenv("SHMEM_HOST_ID"), Status: pestatus.Open(os.Getenv), Ports: o.ports, FailureTimeout: o.failAfter, RelayVia: os.Getenv(world.EnvRelayVia), Timeout: o.timeout, Logger: o.logger,
		Provider: o.rdma, Fabric: world.FabricConfig{Provider: o.fabricProv, Domain: o.fabricDom, Node: o.fabricNode},
	}
	switch {
	case o.tlsOff || !o.uid.TLS:
		if o.userTLS != nil || o.tlsOff != !o.uid.TLS {
			return nil, errs.New("Init", o.rank, errs.NoPE, errs.ErrInvalidArgument,
				"TLS setting disagrees with the unique ID (TLS %v in the ID): pass WithoutTLS to both GetUniqueID and Init", o.uid.TLS)
		}
		cfg.TLS = &world.TLSConfig{Insecure: true}
	case o.userTLS != nil:
		cfg.TLS = &world.TLSConfig{Server: o.userTLS, Client: o.userTLS}
	}
	if o.exitProcess {
		cfg.OnGlobalExit = func(status int) { os.Exit(status) }
	}
	// A context deadline before the start-up timeout is start-up's bound:
	// the steps then measure, and name, the time actually allowed.
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < cfg.Timeout {
		cfg.Timeout = max(time.Until(dl), time.Millisecond)
	}
	c, err := world.Join(ctx, cfg)
	if err != nil {
		if deadlinePassed(ctx) {
			return nil, deadlineEnded(o.rank, err)
		}
		return nil, err
	}
	return configured(newPE(c), o), nil
}

// deadlinePassed reports whether ctx's deadline has passed. ctx.Err()
// alone can still be nil when start-up fails: a network wait given the
// same deadline may end before the context's timer fires.
func deadlinePassed(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// deadlineEnded is err, a start-up failure once ctx's deadline has passed,
// as what it is: the inner steps measured against that deadline (joinWith
// made it their timeout) and report a timeout. It wraps
// context.DeadlineExceeded, as a cancelled start-up wraps context.Canceled.
func deadlineEnded(rank int, err error) error {
	detail := err.Error()
	if e := (*errs.Error)(nil); errors.As(err, &e) {
		detail = e.Detail
	}
	return errs.New("Init", rank, errs.NoPE, fmt.Errorf("%w: %w", errs.ErrBootstrap, context.DeadlineExceeded),
		"the context's deadline ended start-up before the start-up timeout did (where start-up stood: %s)", detail)
}

// uidFromLaunch finds the unique ID a launcher's environment gives.
func uidFromLaunch(ctx context.Context, o *options) (UniqueID, error) {
	l := o.launch
	switch {
	case l.UID != "":
		return bootstrap.ParseUniqueID(l.UID)
	case l.SessionID != "" && l.UIDFile == "":
		// CANN SHMEM's scripts: only SHMEM_UID_SESSION_ID and a rank.
		// (With SHMEM_UID_FILE the variable is rank 0's listening address
		// for GetUniqueID instead, as before; and it wins over
		// torchrun's MASTER_ADDR, whose port torch's own store holds.)
		uid, err := bootstrap.SessionUniqueID(l, o.tlsOff)
		switch {
		case err != nil:
		case l.Secret == "":
			warnNoSecret(o, l.SessionID)
		default:
			warnWeakSecret(o, bootstrap.EnvJobSecret, l.Secret)
		}
		return uid, err
	case l.MasterAddr != "" && l.Secret != "":
		// torchrun-style: every rank derives the same ID from the master
		// address and the job secret it was given.
		warnWeakSecret(o, bootstrap.EnvJobSecret, l.Secret)
		return bootstrap.UniqueIDFromSecret(l.MasterAddr, l.Secret, !o.tlsOff)
	case l.UIDFile != "":
		if l.Rank == 0 {
			uid, err := GetUniqueID(o.raw...)
			if err != nil {
				return uid, err
			}
			return uid, bootstrap.WriteUniqueIDFile(l.UIDFile, uid)
		}
		return bootstrap.ReadUniqueIDFile(ctx, l.UIDFile, o.timeout)
	}
	return UniqueID{}, errs.New("Init", l.Rank, errs.NoPE, errs.ErrBootstrap,
		"%s gave rank %d of %d but no rendezvous: set SHMEM_UNIQUE_ID, SHMEM_UID_FILE, SHMEM_UID_SESSION_ID, or MASTER_ADDR/MASTER_PORT with SHMEM_JOB_SECRET",
		l.Source, l.Rank, l.NPEs)
}

// joinGossip forms the world by gossip. The job secret (WithJobSecret or
// SHMEM_JOB_SECRET) keys the gossip encryption and the job's TLS
// credentials, so processes of other jobs are never admitted.
func joinGossip(ctx context.Context, o *options) (*PE, error) {
	secret, source := o.jobSecret, "WithJobSecret"
	if secret == "" {
		secret, source = os.Getenv(bootstrap.EnvJobSecret), bootstrap.EnvJobSecret
	}
	switch {
	case o.npes < 1:
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "WithSeeds needs npes >= 1, got %d", o.npes)
	case secret == "":
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrBootstrap,
			"WithSeeds needs a job secret (WithJobSecret or %s), and none is set", bootstrap.EnvJobSecret)
	}
	warnWeakSecret(o, source, secret)
	uid, err := bootstrap.UniqueIDFromSecret(o.seeds[0], secret, !o.tlsOff)
	if err != nil {
		return nil, err
	}
	o.uid = uid
	hint := -1
	if o.launch.Source != "" {
		hint = o.launch.Rank
	}
	cfg := gossipConfig(o, hint)
	return joinWith(ctx, o, cfg)
}

// configured applies the options that act on a live PE.
func configured(p *PE, o *options) *PE {
	announce(p, o)
	p.c.SetOpTimeout(o.opTimeout)
	if o.hangReport > 0 {
		p.c.SetHangReport(o.hangReport)
		p.hang = watchSIGQUIT(p.c, os.Stderr)
	}
	return p
}
