package main

import (
	"fmt"
	"time"

	"github.com/goshmem/shmem"
)

// Report is what --diagnose prints as JSON. Every section is filled by a
// gatherer that takes its inputs as arguments, so tests fabricate hosts.
type Report struct {
	Version     string       `json:"version"`
	SpecVersion string       `json:"spec_version"`
	GoVersion   string       `json:"go_version"`
	OS          string       `json:"os"`
	Arch        string       `json:"arch"`
	Cores       int          `json:"cores"`
	Shm         ShmReport    `json:"shared_memory"`
	Listen      ListenReport `json:"listen"`
	UCX         UCXReport    `json:"ucx"`
	RDMA        RDMAReport   `json:"rdma"`
	Libfabric   FabricReport `json:"libfabric"`
	// Rendezvous is set only with --uid: whether this host reaches the
	// unique ID's rank 0, authenticates, and how far its clock is off.
	Rendezvous *RendezvousReport `json:"rendezvous,omitempty"`
	TLS        TLSReport         `json:"tls"`
	Limits     LimitsReport      `json:"limits"`
	// Degraded is true when something here stops or slows goshmem jobs;
	// NextSteps says what to do, one action a line.
	Degraded  bool     `json:"degraded"`
	NextSteps []string `json:"next_steps"`
}

// ShmReport describes /dev/shm, where same-host PEs map each other's heaps.
type ShmReport struct {
	Dir        string `json:"dir"`
	TotalBytes int64  `json:"total_bytes"`
	FreeBytes  int64  `json:"free_bytes"`
	Error      string `json:"error,omitempty"`
	// Segments counts every goshmem segment; Live those whose owner runs.
	Segments int `json:"segments"`
	Live     int `json:"live_segments"`
	// Stale are segments whose owner died: shmem-config --reap removes them.
	Stale []string `json:"stale_segments"`
	// Unreadable are goshmem-named files without a valid header (another
	// user's, or an owner that died inside Create); --reap leaves them.
	Unreadable []string `json:"unreadable_segments"`
}

// ListenReport is where GetUniqueID would put the rank-0 rendezvous and why.
type ListenReport struct {
	Host   string            `json:"host,omitempty"`
	Port   int               `json:"port"`
	Source string            `json:"source,omitempty"`
	Iface  string            `json:"iface,omitempty"`
	Reason string            `json:"reason,omitempty"`
	Error  string            `json:"error,omitempty"`
	Env    map[string]string `json:"env"`
}

// UCXReport says whether UCX, which the RDMA provider will use, is
// installed; nothing uses it yet.
type UCXReport struct {
	Present bool   `json:"present"`
	Path    string `json:"path,omitempty"`
	Via     string `json:"via,omitempty"` // "ldconfig" or "path"
}

// RDMAReport lists the devices of /sys/class/infiniband.
type RDMAReport struct {
	Present bool     `json:"present"`
	Devices []string `json:"devices"`
}

// FabricReport says whether libfabric (the cgo RDMA provider's library,
// build tag goshmem_fabric) is installed and which providers it offers:
// verbs means an RDMA NIC is usable, tcp or sockets only emulate one.
type FabricReport struct {
	Present bool   `json:"present"`
	Path    string `json:"path,omitempty"`
	// Providers are the names `fi_info -l` lists; empty with a Note when
	// fi_info (Debian's libfabric-bin) is not installed.
	Providers []string `json:"providers"`
	Note      string   `json:"note,omitempty"`
}

// RendezvousReport is the outcome of probing a unique ID's rank 0: the
// checks CANN SHMEM's FAQ has operators run by hand for an "inter-device
// communication timeout".
type RendezvousReport struct {
	Addr      string `json:"addr"`
	TLS       bool   `json:"tls"`
	Reachable bool   `json:"reachable"` // connected and authenticated
	// RTTMicros is the probe's round trip after authentication.
	RTTMicros int64 `json:"rtt_us,omitempty"`
	// ClockSkewMillis is rank 0's clock minus this host's, ± RTT/2; nil
	// (absent) when rank 0 was not reached, so nothing was measured.
	ClockSkewMillis *float64 `json:"clock_skew_ms,omitempty"`
	// Arrived of NPEs ranks had joined the exchange when probed.
	Arrived int    `json:"arrived"`
	NPEs    int    `json:"npes"`
	Error   string `json:"error,omitempty"`
}

// maxSkew is the clock difference beyond which --diagnose degrades: logs
// of the hosts no longer line up, and certificates (valid from their
// creation on) look not yet valid to a host whose clock is behind.
const maxSkew = time.Second

// TLSReport states the TLS default and what changes it.
type TLSReport struct {
	Default   string   `json:"default"`
	ChangedBy []string `json:"changed_by"`
}

// Limit is one resource limit; -1 means unlimited.
type Limit struct {
	Soft  int64  `json:"soft"`
	Hard  int64  `json:"hard"`
	Error string `json:"error,omitempty"`
}

// LimitsReport holds the limits goshmem jobs run into: open files (one
// socket per peer and more) and locked memory (RDMA registration).
type LimitsReport struct {
	NoFile  Limit `json:"nofile"`
	MemLock Limit `json:"memlock"`
}

// Thresholds for assess. minShmFree is one PE's default heap: less than
// that in /dev/shm and even a single default PE cannot map its heap.
// minNoFile keeps a 1000-PE job's sockets within the limit.
// minMemLock is what an RDMA provider registers per PE at least.
const (
	minShmFree = shmem.DefaultHeapSize
	minNoFile  = 4096
	minMemLock = 64 << 20
)

// assess sets r.Degraded and r.NextSteps from the gathered sections.
func assess(r *Report) {
	var steps []string
	degrade := func(format string, args ...any) {
		r.Degraded = true
		steps = append(steps, fmt.Sprintf(format, args...))
	}
	switch {
	case r.Shm.Error != "":
		degrade("shared memory is unusable (%s): mount a tmpfs at %s, or run every PE over TCP (shmemrun --network, SHMEM_TRANSPORT=tcp)", r.Shm.Error, r.Shm.Dir)
	case r.Shm.FreeBytes < minShmFree:
		degrade("only %s free in %s; each PE on this host needs its heap there (SHMEM_SYMMETRIC_SIZE, default %s): enlarge it (docker run --shm-size, mount -o remount,size=) or use shmemrun --network",
			bytesStr(r.Shm.FreeBytes), r.Shm.Dir, bytesStr(shmem.DefaultHeapSize))
	}
	if n := len(r.Shm.Stale); n > 0 {
		degrade("%d stale goshmem segment(s) in %s hold memory: run `shmem-config --reap`", n, r.Shm.Dir)
	}
	if n := len(r.Shm.Unreadable); n > 0 {
		steps = append(steps, fmt.Sprintf("%d goshmem-named file(s) in %s have no valid header (another user's or a crash inside start-up); remove them by hand once no job runs", n, r.Shm.Dir))
	}
	if r.Listen.Error != "" {
		degrade("no usable address for a multi-host unique ID (%s): set SHMEM_UID_SOCK_IFNAME=<iface> or SHMEM_UID_SESSION_ID=<ip:port>; single-host jobs under shmemrun still work on 127.0.0.1", r.Listen.Error)
	}
	if l := r.Limits.NoFile; l.Error == "" && l.Soft >= 0 && l.Soft < minNoFile {
		steps = append(steps, fmt.Sprintf("open-file limit is %d: raise it (ulimit -n %d) for jobs of more than a few hundred PEs", l.Soft, minNoFile))
	}
	if r.RDMA.Present {
		if l := r.Limits.MemLock; l.Error == "" && l.Soft >= 0 && l.Soft < minMemLock {
			steps = append(steps, fmt.Sprintf("locked-memory limit is %s: RDMA needs more (ulimit -l unlimited, or memlock in /etc/security/limits.conf)", bytesStr(l.Soft)))
		}
		if !r.UCX.Present {
			steps = append(steps, "RDMA devices exist but UCX (libucp.so) was not found: install UCX for the coming RDMA provider")
		}
	}
	if rz := r.Rendezvous; rz != nil {
		switch {
		case !rz.Reachable:
			degrade("this host cannot reach or authenticate with rank 0's rendezvous at %s (%s): check that rank 0 runs (it listens only while in Init), the firewall lets the port through, and every PE uses the same unique ID", rz.Addr, rz.Error)
		case rz.ClockSkewMillis != nil && (*rz.ClockSkewMillis > float64(maxSkew.Milliseconds()) || -*rz.ClockSkewMillis > float64(maxSkew.Milliseconds())):
			degrade("this host's clock is %.0f ms off rank 0's: synchronize the clocks (chrony/NTP)", *rz.ClockSkewMillis)
		}
	}
	if steps == nil {
		steps = []string{}
	}
	r.NextSteps = steps
}

// bytesStr prints n in binary units for messages.
func bytesStr(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
