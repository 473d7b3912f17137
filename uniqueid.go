package shmem

import (
	"net"
	"os"
	"strconv"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
)

// UniqueID names a world for unique-ID start-up (aclshmemx_uniqueid_t):
// where PE 0 listens, the job secret, and the pin of the job's TLS
// certificate. Its String is a single token; keep it as secret as the job.
type UniqueID = bootstrap.UniqueID

// ParseUniqueID parses a UniqueID's String.
func ParseUniqueID(s string) (UniqueID, error) { return bootstrap.ParseUniqueID(s) }

// GetUniqueID makes the unique ID of a new world (aclshmemx_get_uniqueid).
// Call it in the process that will be PE 0. The listening address follows
// CANN SHMEM's rules: SHMEM_UID_SESSION_ID, else SHMEM_UID_SOCK_IFNAME, else
// the first suitable interface; a free port is chosen when none is given.
func GetUniqueID(opts ...Option) (UniqueID, error) {
	o, err := resolve(opts)
	if err != nil {
		return UniqueID{}, err
	}
	ifaces, err := bootstrap.SystemIfaces()
	if err != nil {
		return UniqueID{}, err
	}
	ch, err := bootstrap.SelectListenAddr(os.Getenv, ifaces)
	if err != nil {
		return UniqueID{}, err
	}
	addr := ch.HostPort()
	if err := o.ports.CheckPort(int(ch.Port), ch.Source); err != nil {
		return UniqueID{}, err
	}
	if err := ch.CheckListen(); err != nil {
		return UniqueID{}, err
	}
	if ch.Port == 0 {
		// Choose a port now so the ID can carry it; PE 0 binds it at Init.
		port, err := bootstrap.FreePortIn(o.ports, ch.Host)
		if err != nil {
			return UniqueID{}, errs.New("GetUniqueID", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "%v", err)
		}
		addr = net.JoinHostPort(ch.Host, strconv.Itoa(port))
	}
	// The pin is a placeholder until PinJobCert derives it from the secret
	// that NewUniqueID draws.
	var pin [32]byte
	if !o.tlsOff {
		pin[0] = 1
	}
	uid, err := bootstrap.NewUniqueID(addr, !o.tlsOff, pin)
	if err != nil {
		return uid, err
	}
	if err := bootstrap.PinJobCert(&uid); err != nil {
		return uid, err
	}
	o.logger.Debug("unique ID made", "addr", addr, "source", ch.Source, "reason", ch.Reason, "port", strconv.Itoa(int(ch.Port)))
	return uid, uid.Validate()
}
