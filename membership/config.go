package membership

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// Config describes one process's part in forming a world. Every process of a
// job passes the same JobID, Version, Secret and NPEs.
type Config struct {
	// JobID names the job; processes of another job are refused. Required,
	// at most 64 bytes.
	JobID string
	// Version is the program/protocol version; processes of another version
	// are refused, so a half-upgraded job fails at Form, not mid-run. At
	// most 64 bytes; default "" (all processes must still agree).
	Version string
	// Secret is the job secret. The 32-byte gossip key is SHA-256 over a
	// domain label and Secret, so the secret itself never travels and a
	// process without it can neither read nor join the gossip. Required
	// (non-empty); use at least 16 random bytes.
	Secret []byte
	// NPEs is the world size. Required, >= 1.
	NPEs int
	// RankHint is this process's wished rank, or -1 (default when built by
	// DefaultConfig; note a zero Config means rank 0). Hints are honoured
	// only when every member gives one and they form a permutation of
	// 0..NPEs-1; otherwise ranks follow the members' names in byte order.
	RankHint int
	// Name is this process's node name, at most 64 bytes. Default: "gsm-"
	// + 16 random hex digits, because memberlist refuses a name reused at a new address, so
	// a restarted process must not reuse its old name.
	Name string
	// BindAddr is the IP to listen on. Default "127.0.0.1": nothing is
	// exposed beyond the host unless the caller asks.
	BindAddr string
	// BindPort is the TCP+UDP port; 0 (default) picks a free one.
	BindPort int
	// AdvertiseAddr is the IP peers use to reach this process. Default:
	// BindAddr; required when BindAddr is unspecified (0.0.0.0, ::), since
	// memberlist would otherwise guess an interface, and never unspecified
	// itself.
	AdvertiseAddr string
	// Seeds are "host:port" gossip addresses of some other processes of the
	// job; any one that is alive suffices. Empty only when NPEs is 1 or
	// others will join this process.
	Seeds []string
	// Meta is the application record (e.g. control/data addresses) carried
	// to every member. It shares the 512-byte memberlist metadata with a
	// 55-byte header plus JobID and Version; Form fails if it does not fit.
	Meta []byte
	// ProbeInterval is the SWIM probe period. Default 500 ms: each member is
	// probed about once per period, so a dead one is suspected within ~1 s.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one direct probe's round trip. Default 300 ms:
	// generous on a LAN (and on a loaded host, where a shorter one makes
	// false suspicions) yet below ProbeInterval, as memberlist requires.
	ProbeTimeout time.Duration
	// SuspicionMult scales how long a suspect may refute before it is
	// declared dead (SuspicionMult * log10(n) * ProbeInterval, more while
	// few peers confirm). Default 4: with 16 members a dead one is declared
	// 2.4-5 s after the first failed probe, while a process stalled by GC or
	// a loaded CPU still has time to refute.
	SuspicionMult int
	// GossipInterval is the gossip period. Default 20 ms: membership news
	// (joins, suspicions, a member's sealed header) spreads in tens of
	// milliseconds; a round with nothing to tell sends nothing.
	GossipInterval time.Duration
	// PushPullInterval is the period of full state exchanges, which repair
	// lost gossip, and of the slow repeat of a delivered sealing report.
	// Default 1 s (memberlist's local default is 15 s).
	PushPullInterval time.Duration
	// JoinInterval is how often Form re-joins the seeds while its view is
	// incomplete, and repeats a sealing report that was not delivered.
	// Default 250 ms: with 16 processes a single join can stall formation
	// for 16-25 s waiting for push-pull.
	JoinInterval time.Duration
	// Logger receives memberlist's log and rejection notices. Default
	// slog.Default(), so refused processes are visible.
	Logger *slog.Logger
	// FormTimeout bounds Form (ctx may bound it further); a join or direct
	// message in flight is then cut, and a gossip probe in flight ends
	// within ProbeInterval. Default 60 s: processes of a job may be started tens of
	// seconds apart. Once all are running, 16 processes on loopback form
	// in ~0.2 s, and in 0.2-4 s under -race on a busy 2-core host.
	FormTimeout time.Duration

	// tcpTimeout replaces defaultTCPTimeout when not zero: tests only.
	tcpTimeout time.Duration
	// onPeer, when set, is called with each peer that enters the view:
	// tests only, to act once processes have seen each other.
	onPeer func(name string)
}

// replaceGrace is how long Form waits, after gossip declared a member of
// its table dead before sealing, for a live process to take its place
// before it fails naming the dead one. A process restarted in place of
// one killed has been knocking (refused as one too many while the dead one
// held its place) and joins on its next attempt, every JoinInterval/5;
// the others learn of it by gossip, or by the next push-pull should that
// be lost. A member declared dead falsely (starved for a suspicion
// timeout: a loaded host) refutes as soon as it runs again and hears of
// it, within a few GossipIntervals; ten ProbeIntervals (5 s by default)
// leave it the time to be scheduled, still far short of FormTimeout.
func (c Config) replaceGrace() time.Duration {
	return max(4*c.JoinInterval, c.PushPullInterval, 10*c.ProbeInterval)
}

// DefaultConfig returns a Config with RankHint -1 and the defaults above
// filled in; the caller sets JobID, Secret, NPEs, Seeds and Meta.
func DefaultConfig() Config {
	c := Config{RankHint: noHint}
	c.fill()
	return c
}

// gossipKeyLabel separates this key derivation from any other use of the
// job secret.
const gossipKeyLabel = "goshmem/membership/gossip-key/v1\x00"

// gossipKey derives the memberlist encryption key from the job secret.
func gossipKey(secret []byte) []byte {
	h := sha256.New()
	h.Write([]byte(gossipKeyLabel))
	h.Write(secret)
	return h.Sum(nil)
}

// fill sets defaults for zero fields.
func (c *Config) fill() {
	if c.BindAddr == "" {
		c.BindAddr = "127.0.0.1"
	}
	if c.AdvertiseAddr == "" {
		if ip := net.ParseIP(c.BindAddr); ip != nil && !ip.IsUnspecified() {
			c.AdvertiseAddr = c.BindAddr
		}
	}
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = 500 * time.Millisecond
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = 300 * time.Millisecond
	}
	if c.SuspicionMult <= 0 {
		c.SuspicionMult = 4
	}
	if c.GossipInterval <= 0 {
		c.GossipInterval = 20 * time.Millisecond
	}
	if c.PushPullInterval <= 0 {
		c.PushPullInterval = time.Second
	}
	if c.JoinInterval <= 0 {
		c.JoinInterval = 250 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.FormTimeout <= 0 {
		c.FormTimeout = 60 * time.Second
	}
}

// resolve fills defaults, draws a name if none is given, and validates.
func (c Config) resolve() (Config, error) {
	c.fill()
	if c.Name == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return c, errs.New("Form", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "drawing a node name: %v", err)
		}
		c.Name = "gsm-" + hex.EncodeToString(b[:])
	}
	bad := func(format string, args ...any) (Config, error) {
		return c, errs.New("Form", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	switch {
	case len(c.Name) > maxIDLen:
		return bad("Name is %d bytes, limit %d", len(c.Name), maxIDLen)
	case c.JobID == "":
		return bad("JobID is empty")
	case len(c.JobID) > maxIDLen:
		return bad("JobID is %d bytes, limit %d", len(c.JobID), maxIDLen)
	case len(c.Version) > maxIDLen:
		return bad("Version is %d bytes, limit %d", len(c.Version), maxIDLen)
	case len(c.Secret) == 0:
		return bad("Secret is empty: the gossip key is derived from it")
	case c.NPEs < 1 || c.NPEs > maxNPEs:
		return bad("NPEs %d out of range 1..%d", c.NPEs, maxNPEs)
	case c.RankHint < noHint || c.RankHint >= c.NPEs:
		return bad("RankHint %d out of range -1..%d", c.RankHint, c.NPEs-1)
	case c.BindPort < 0 || c.BindPort > 65535:
		return bad("BindPort %d out of range 0..65535", c.BindPort)
	case net.ParseIP(c.BindAddr) == nil:
		return bad("BindAddr %q is not an IP address", c.BindAddr)
	case c.AdvertiseAddr == "":
		return bad("AdvertiseAddr is required when BindAddr is %s", c.BindAddr)
	case net.ParseIP(c.AdvertiseAddr) == nil:
		return bad("AdvertiseAddr %q is not an IP address", c.AdvertiseAddr)
	case net.ParseIP(c.AdvertiseAddr).IsUnspecified():
		return bad("AdvertiseAddr %s is no address to reach this process at: the others would dial themselves", c.AdvertiseAddr)
	case c.ProbeTimeout >= c.ProbeInterval:
		return bad("ProbeTimeout %v must be below ProbeInterval %v", c.ProbeTimeout, c.ProbeInterval)
	}
	for _, s := range c.Seeds {
		if _, port, err := net.SplitHostPort(s); err != nil {
			return bad("seed %q: %v", s, err)
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return bad("seed %q: bad port", s)
		}
	}
	if n := headerFixed + len(c.JobID) + len(c.Version) + len(c.Meta); n > metaMaxSize {
		return bad("Meta is %d bytes; with the %d-byte header, JobID and Version the record is %d bytes, limit %d",
			len(c.Meta), headerFixed, n, metaMaxSize)
	}
	return c, nil
}
