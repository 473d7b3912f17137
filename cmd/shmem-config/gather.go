package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/rendezvous"
	"github.com/goshmem/shmem/internal/secure"
	"github.com/goshmem/shmem/transport/udma"
)

// shmReport describes /dev/shm from ShmInfo's and List's results.
func shmReport(total, free int64, infoErr error, segs []udma.SegmentInfo, listErr error) ShmReport {
	r := ShmReport{Dir: udma.Dir, TotalBytes: total, FreeBytes: free, Stale: []string{}, Unreadable: []string{}}
	if infoErr != nil {
		r.Error = infoErr.Error()
	}
	if listErr != nil && r.Error == "" {
		r.Error = listErr.Error()
	}
	r.Segments = len(segs)
	for _, s := range segs {
		switch {
		case !s.Valid:
			r.Unreadable = append(r.Unreadable, s.Name)
		case s.OwnerAlive:
			r.Live++
		default:
			r.Stale = append(r.Stale, s.Name)
		}
	}
	return r
}

// listenReport applies GetUniqueID's address rules to the environment and
// interfaces given.
func listenReport(getenv func(string) string, ifaces []bootstrap.Iface, ifErr error) ListenReport {
	r := ListenReport{Env: map[string]string{}}
	for _, k := range []string{bootstrap.EnvUIDSessionID, bootstrap.EnvUIDSockIfname} {
		if v := getenv(k); v != "" {
			r.Env[k] = v
		}
	}
	if ifErr != nil {
		r.Error = ifErr.Error()
		return r
	}
	ch, err := bootstrap.SelectListenAddr(getenv, ifaces)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Host, r.Port, r.Source, r.Iface, r.Reason = ch.Host, int(ch.Port), ch.Source, ch.Iface, ch.Reason
	return r
}

// ucxDirs are where UCX installs land when ldconfig does not know them.
var ucxDirs = []string{"/usr/lib64", "/usr/lib", "/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/opt/ucx/lib", "/usr/local/ucx/lib"}

// findUCX looks for libucp.so in the output of `ldconfig -p`, then in the
// common directories (exists says whether a path is a file).
func findUCX(ldconfigOut string, exists func(string) bool) UCXReport {
	sc := bufio.NewScanner(strings.NewReader(ldconfigOut))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "libucp.so") {
			continue
		}
		if _, path, ok := strings.Cut(line, "=>"); ok {
			return UCXReport{Present: true, Path: strings.TrimSpace(path), Via: "ldconfig"}
		}
	}
	for _, d := range ucxDirs {
		for _, name := range []string{"libucp.so", "libucp.so.0"} {
			if p := filepath.Join(d, name); exists(p) {
				return UCXReport{Present: true, Path: p, Via: "path"}
			}
		}
	}
	return UCXReport{}
}

// rdmaReport lists RDMA devices from the entries of /sys/class/infiniband;
// a missing directory means none.
func rdmaReport(names []string) RDMAReport {
	sort.Strings(names)
	return RDMAReport{Present: len(names) > 0, Devices: append([]string{}, names...)}
}

// tlsReport is fixed: TLS is on unless the job says otherwise.
func tlsReport() TLSReport {
	return TLSReport{Default: "on (TLS 1.3, credentials derived from the job secret)", ChangedBy: []string{
		"shmem.WithoutTLS() passed to GetUniqueID and Init (plain TCP, still authenticated by the job secret)",
		"shmemrun --no-tls (the unique ID carries it to every PE: the program need not pass shmem.WithoutTLS)",
		"shmem.WithTLS(cfg) / shmem.LoadTLS(ca, cert, key, crl): your own mutual-TLS certificates",
	}}
}

// limit reads one resource limit.
func limit(resource int) Limit {
	var rl unix.Rlimit
	if err := unix.Getrlimit(resource, &rl); err != nil {
		return Limit{Soft: -1, Hard: -1, Error: err.Error()}
	}
	return Limit{Soft: rlim(rl.Cur), Hard: rlim(rl.Max)}
}

func rlim(v uint64) int64 {
	if v == unix.RLIM_INFINITY || v > 1<<62 {
		return -1
	}
	return int64(v)
}

// probeTimeout bounds --uid's probe of rank 0.
const probeTimeout = 10 * time.Second

// gather builds the report of this host, probing uid's rank 0 if uid is
// not nil.
func gather(uid *bootstrap.UniqueID) Report {
	major, minor := shmem.InfoGetVersion()
	r := Report{
		Version:     shmem.Version,
		SpecVersion: specVersion(major, minor),
		GoVersion:   runtime.Version(),
		OS:          runtime.GOOS,
		Arch:        runtime.GOARCH,
		Cores:       runtime.NumCPU(),
		TLS:         tlsReport(),
		Limits:      LimitsReport{NoFile: limit(unix.RLIMIT_NOFILE), MemLock: limit(unix.RLIMIT_MEMLOCK)},
	}
	total, free, infoErr := udma.ShmInfo()
	segs, listErr := udma.List("")
	r.Shm = shmReport(total, free, infoErr, segs, listErr)
	ifaces, ifErr := bootstrap.SystemIfaces()
	r.Listen = listenReport(os.Getenv, ifaces, ifErr)
	if l := &r.Listen; l.Error == "" {
		// What GetUniqueID would refuse on this host (bootstrap.Choice.CheckListen).
		if err := (bootstrap.Choice{Host: l.Host, Port: uint16(l.Port), Source: l.Source}).CheckListen(); err != nil {
			l.Error = err.Error()
		}
	}
	ld := ldconfig()
	r.UCX = findUCX(ld, func(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() })
	ents, _ := os.ReadDir("/sys/class/infiniband")
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	r.RDMA = rdmaReport(names)
	fiOut, fiErr := fiInfo()
	r.Libfabric = findFabric(ld, fiOut, fiErr)
	if uid != nil {
		r.Rendezvous = probeRendezvous(context.Background(), *uid, probeTimeout)
	}
	assess(&r)
	return r
}

// findFabric looks for libfabric.so in `ldconfig -p` output and reads the
// provider names from `fi_info -l` output (lines "name:" at column 0);
// fiInfoErr says why fi_info could not run.
func findFabric(ldconfigOut, fiInfoOut string, fiInfoErr error) FabricReport {
	r := FabricReport{Providers: []string{}}
	sc := bufio.NewScanner(strings.NewReader(ldconfigOut))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "libfabric.so") {
			continue
		}
		if _, path, ok := strings.Cut(line, "=>"); ok {
			r.Present, r.Path = true, strings.TrimSpace(path)
			break
		}
	}
	if fiInfoErr != nil {
		r.Note = "no provider list: fi_info did not run (" + fiInfoErr.Error() + "); install libfabric-bin"
		return r
	}
	sc = bufio.NewScanner(strings.NewReader(fiInfoOut))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutSuffix(line, ":"); ok && name != "" && !strings.ContainsAny(name[:1], " \t") {
			r.Providers = append(r.Providers, name)
		}
	}
	r.Present = r.Present || len(r.Providers) > 0
	return r
}

// probeRendezvous probes the rank 0 of uid (see rendezvous.Probe).
func probeRendezvous(ctx context.Context, uid bootstrap.UniqueID, timeout time.Duration) *RendezvousReport {
	rz := &RendezvousReport{Addr: uid.Addr, TLS: uid.TLS}
	cfg := rendezvous.Config{Addr: uid.Addr, Secret: uid.Secret[:], Timeout: timeout}
	if uid.TLS {
		_, client, err := secure.JobConfigs(uid.Secret[:])
		if err != nil {
			rz.Error = err.Error()
			return rz
		}
		cfg.ClientTLS = client
	}
	res, err := rendezvous.Probe(ctx, cfg)
	if err != nil {
		rz.Error = err.Error()
		return rz
	}
	rz.Reachable = true
	rz.RTTMicros = res.RTT.Microseconds()
	skew := float64(res.Skew.Microseconds()) / 1000
	rz.ClockSkewMillis = &skew
	rz.Arrived, rz.NPEs = res.Arrived, res.NPEs
	return rz
}
