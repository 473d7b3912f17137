package launch

import (
	"slices"
	"strconv"
	"strings"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/affinity"
)

// envHostID names the host a PE runs on (world.Config.HostID).
const envHostID = "SHMEM_HOST_ID"

// owned lists the variables the launcher always sets or clears: an
// inherited value (a stale SHMEM_UID_FILE from an outer job, say) would
// contradict the launch.
func owned() []string {
	return []string{
		bootstrap.EnvRank, bootstrap.EnvNPEs, bootstrap.EnvLocalRank, bootstrap.EnvLocalSize,
		bootstrap.EnvUniqueID, bootstrap.EnvUIDFile, bootstrap.EnvLauncherPID,
		bootstrap.EnvStatusFD, affinity.EnvAllowed,
	}
}

// env returns PE rank's environment: base without the variables the launch
// sets, then rank, size, local rank and size, host, rendezvous, the
// launcher's pid and, when the PEs are bound, the CPUs they were planned
// on (affinity.EnvAllowed), then RankEnv(rank). The rank rank is the PE's
// index in the job even with NoRank, which only keeps it from the PE.
func (c *Config) env(rank int, base []string, launcher int) []string {
	localRank, localSize := rank, c.NPEs
	if c.Hosts != nil {
		localRank, localSize = 0, 0
		for r, h := range c.Hosts {
			if h == c.Hosts[rank] {
				if r < rank {
					localRank++
				}
				localSize++
			}
		}
	}
	var set []string
	if !c.NoRank {
		set = append(set,
			bootstrap.EnvRank+"="+strconv.Itoa(rank),
			bootstrap.EnvNPEs+"="+strconv.Itoa(c.NPEs),
			bootstrap.EnvLocalRank+"="+strconv.Itoa(localRank),
			bootstrap.EnvLocalSize+"="+strconv.Itoa(localSize))
	}
	if c.Hosts != nil {
		set = append(set, envHostID+"=host"+strconv.Itoa(c.Hosts[rank]))
	}
	if c.UniqueID != "" {
		set = append(set, bootstrap.EnvUniqueID+"="+c.UniqueID)
	}
	if c.UIDFile != "" {
		set = append(set, bootstrap.EnvUIDFile+"="+c.UIDFile)
	}
	if c.Secret != "" {
		set = append(set, bootstrap.EnvJobSecret+"="+c.Secret)
	}
	set = append(set, bootstrap.EnvLauncherPID+"="+strconv.Itoa(launcher))
	if cpus := c.planned(); cpus != nil {
		set = append(set, affinity.EnvAllowed+"="+affinity.FormatList(cpus))
	}
	if c.RankEnv != nil {
		set = append(set, c.RankEnv(rank)...)
	}
	drop := make(map[string]bool, len(set)+8)
	for _, k := range owned() {
		drop[k] = true
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// planned returns the CPUs of every PE's share, ascending, or nil when the
// PEs are not bound.
func (c *Config) planned() []int {
	var all []int
	for _, cpus := range c.CPUs {
		all = append(all, cpus...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}
