package bootstrap

import (
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func TestDetectLaunch(t *testing.T) {
	uid, err := NewUniqueID("127.0.0.1:4000", false, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		getenv func(string) string
		want   Launch
	}{
		{"goshmem full", env("SHMEM_RANK", "2", "SHMEM_NPES", "4", "SHMEM_LOCAL_RANK", "0", "SHMEM_LOCAL_SIZE", "2",
			"SHMEM_UNIQUE_ID", uid.String(), "SHMEM_UID_FILE", "/tmp/j/uid", "SHMEM_JOB_SECRET", "s3cret"),
			Launch{Source: SourceGoshmem, Rank: 2, NPEs: 4, LocalRank: 0, LocalSize: 2, UID: uid.String(), UIDFile: "/tmp/j/uid", Secret: "s3cret"}},
		{"goshmem minimal", env("SHMEM_RANK", "0", "SHMEM_NPES", "1"),
			Launch{Source: SourceGoshmem, Rank: 0, NPEs: 1, LocalRank: -1}},
		{"goshmem spaces trimmed", env("SHMEM_RANK", " 1 ", "SHMEM_NPES", "2\n"),
			Launch{Source: SourceGoshmem, Rank: 1, NPEs: 2, LocalRank: -1}},
		{"goshmem wins over all", env("SHMEM_RANK", "1", "SHMEM_NPES", "3", "SLURM_PROCID", "0", "SLURM_NTASKS", "8",
			"OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "6", "PMI_RANK", "4", "PMI_SIZE", "5", "RANK", "3", "WORLD_SIZE", "4"),
			Launch{Source: SourceGoshmem, Rank: 1, NPEs: 3, LocalRank: -1}},
		{"slurm", env("SLURM_PROCID", "7", "SLURM_NTASKS", "8", "SLURM_LOCALID", "3"),
			Launch{Source: SourceSlurm, Rank: 7, NPEs: 8, LocalRank: 3}},
		{"slurm wins over ompi", env("SLURM_PROCID", "1", "SLURM_NTASKS", "2", "OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2"),
			Launch{Source: SourceSlurm, Rank: 1, NPEs: 2, LocalRank: -1}},
		{"openmpi", env("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4", "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
			Launch{Source: SourceOpenMPI, Rank: 3, NPEs: 4, LocalRank: 1, LocalSize: 2}},
		{"openmpi wins over pmi", env("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2", "PMI_RANK", "1", "PMI_SIZE", "2"),
			Launch{Source: SourceOpenMPI, Rank: 0, NPEs: 2, LocalRank: -1}},
		{"pmi", env("PMI_RANK", "5", "PMI_SIZE", "6"),
			Launch{Source: SourcePMI, Rank: 5, NPEs: 6, LocalRank: -1}},
		{"pmi wins over torchrun", env("PMI_RANK", "0", "PMI_SIZE", "1", "RANK", "1", "WORLD_SIZE", "2"),
			Launch{Source: SourcePMI, Rank: 0, NPEs: 1, LocalRank: -1}},
		{"torchrun", env("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "2", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "29500"),
			Launch{Source: SourceTorchrun, Rank: 1, NPEs: 2, LocalRank: 1, LocalSize: 2, MasterAddr: "127.0.0.1:29500"}},
		{"torchrun ipv6 master", env("RANK", "0", "WORLD_SIZE", "1", "MASTER_ADDR", "::1", "MASTER_PORT", "1"),
			Launch{Source: SourceTorchrun, Rank: 0, NPEs: 1, LocalRank: -1, MasterAddr: "[::1]:1"}},
		{"master addr under slurm", env("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "MASTER_ADDR", "head-node", "MASTER_PORT", "6000"),
			Launch{Source: SourceSlurm, Rank: 0, NPEs: 2, LocalRank: -1, MasterAddr: "head-node:6000"}},
		{"uid under ompi", env("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2", "SHMEM_UNIQUE_ID", uid.String()),
			Launch{Source: SourceOpenMPI, Rank: 0, NPEs: 2, LocalRank: -1, UID: uid.String()}},
		{"max npes", env("SHMEM_RANK", "65535", "SHMEM_NPES", "65536"),
			Launch{Source: SourceGoshmem, Rank: MaxNPEs - 1, NPEs: MaxNPEs, LocalRank: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, found, err := DetectLaunch(c.getenv)
			if err != nil || !found {
				t.Fatalf("DetectLaunch = %+v, %v, %v", got, found, err)
			}
			if got != c.want {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestDetectLaunchNone(t *testing.T) {
	for _, g := range []func(string) string{
		env(),
		env("WORLD_SIZE", "4"), // torchrun-looking leftovers without a rank
		env("LOCAL_RANK", "0"), // set by unrelated tools
		env("SHMEM_UID_SESSION_ID", "127.0.0.1:1"), // GetUniqueID's, not a launch
		env("SHMEM_RANK", "  "),
	} {
		l, found, err := DetectLaunch(g)
		if err != nil || found || l != (Launch{}) {
			t.Fatalf("DetectLaunch = %+v, %v, %v; want nothing", l, found, err)
		}
	}
}

func TestDetectLaunchErrors(t *testing.T) {
	cases := []struct {
		name   string
		getenv func(string) string
		want   []string // substrings, the variable first
	}{
		{"rank not a number", env("SHMEM_RANK", "one", "SHMEM_NPES", "2"), []string{"SHMEM_RANK", "not a decimal"}},
		{"rank negative", env("SHMEM_RANK", "-1", "SHMEM_NPES", "2"), []string{"SHMEM_RANK=-1", "outside"}},
		{"rank equals npes", env("SHMEM_RANK", "2", "SHMEM_NPES", "2"), []string{"SHMEM_RANK=2", "SHMEM_NPES=2"}},
		{"npes missing", env("SHMEM_RANK", "0"), []string{"SHMEM_NPES", "is not"}},
		{"npes zero", env("SHMEM_RANK", "0", "SHMEM_NPES", "0"), []string{"SHMEM_NPES=0", "outside [1,"}},
		{"npes too big", env("SHMEM_RANK", "0", "SHMEM_NPES", "1048577"), []string{"SHMEM_NPES", "outside"}},
		{"npes one over the limit", env("SHMEM_RANK", "0", "SHMEM_NPES", "65537"), []string{"SHMEM_NPES", "outside [1, 65536]"}},
		{"npes huge", env("SHMEM_RANK", "0", "SHMEM_NPES", "99999999999999999999999"), []string{"SHMEM_NPES", "not a decimal"}},
		{"npes float", env("RANK", "0", "WORLD_SIZE", "4e9"), []string{"WORLD_SIZE", "not a decimal"}},
		{"local rank beyond local size", env("SHMEM_RANK", "0", "SHMEM_NPES", "4", "SHMEM_LOCAL_RANK", "2", "SHMEM_LOCAL_SIZE", "2"), []string{"SHMEM_LOCAL_RANK=2", "outside [0, 1]"}},
		{"local size beyond npes", env("SHMEM_RANK", "0", "SHMEM_NPES", "2", "SHMEM_LOCAL_SIZE", "3"), []string{"SHMEM_LOCAL_SIZE=3", "outside"}},
		{"local rank beyond npes", env("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_LOCALID", "2"), []string{"SLURM_LOCALID=2", "outside"}},
		{"local rank garbage", env("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2", "OMPI_COMM_WORLD_LOCAL_RANK", "x"), []string{"OMPI_COMM_WORLD_LOCAL_RANK", "not a decimal"}},
		{"slurm size missing", env("SLURM_PROCID", "0"), []string{"SLURM_NTASKS", "is not"}},
		{"pmi rank out of range", env("PMI_RANK", "9", "PMI_SIZE", "4"), []string{"PMI_RANK=9", "PMI_SIZE=4"}},
		{"torchrun size missing", env("RANK", "0"), []string{"WORLD_SIZE", "is not"}},
		{"bad goshmem rank does not fall through", env("SHMEM_RANK", "x", "SLURM_PROCID", "0", "SLURM_NTASKS", "1"), []string{"SHMEM_RANK"}},
		{"npes without rank under slurm", env("SHMEM_NPES", "2", "SLURM_PROCID", "0", "SLURM_NTASKS", "2"), []string{"SHMEM_NPES=2", "SHMEM_RANK is not"}},
		{"stray npes", env("SHMEM_NPES", "2"), []string{"SHMEM_NPES=2", "SHMEM_RANK is not"}},
		{"stray local rank", env("SHMEM_LOCAL_RANK", "0"), []string{"SHMEM_LOCAL_RANK=0", "SHMEM_RANK is not"}},
		{"stray unique id", env("SHMEM_UNIQUE_ID", "gsu1.x"), []string{"SHMEM_UNIQUE_ID", "no launcher"}},
		{"stray uid file", env("SHMEM_UID_FILE", "/tmp/u"), []string{"SHMEM_UID_FILE", "no launcher"}},
		{"bad unique id", env("SHMEM_RANK", "0", "SHMEM_NPES", "1", "SHMEM_UNIQUE_ID", "gsu1.AAAA"), []string{"SHMEM_UNIQUE_ID", "shorter than"}},
		{"master port missing", env("RANK", "0", "WORLD_SIZE", "1", "MASTER_ADDR", "h"), []string{"MASTER_PORT", "is not"}},
		{"master addr missing", env("RANK", "0", "WORLD_SIZE", "1", "MASTER_PORT", "1"), []string{"MASTER_ADDR", "is not"}},
		{"master port bad", env("RANK", "0", "WORLD_SIZE", "1", "MASTER_ADDR", "h", "MASTER_PORT", "0"), []string{"MASTER_PORT", "bad port 0"}},
		{"master addr bad", env("RANK", "0", "WORLD_SIZE", "1", "MASTER_ADDR", "[::1]", "MASTER_PORT", "5"), []string{"MASTER_ADDR"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, found, err := DetectLaunch(c.getenv)
			if !errors.Is(err, errs.ErrBootstrap) {
				t.Fatalf("err = %v, want ErrBootstrap", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("err = %v, want it to mention %q", err, w)
				}
			}
			if found || l != (Launch{}) {
				t.Fatalf("returned %+v, %v with the error", l, found)
			}
		})
	}
}

func FuzzDetectLaunch(f *testing.F) {
	f.Add("SHMEM_RANK", "0", "SHMEM_NPES", "2")
	f.Add("RANK", "1", "WORLD_SIZE", "2")
	f.Add("SLURM_PROCID", "-1", "SLURM_NTASKS", "x")
	f.Add("MASTER_ADDR", "::1", "MASTER_PORT", "99")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		// Two fuzzed variables on top of a valid torchrun world, so the
		// fuzzer both breaks and overrides a real configuration.
		base := map[string]string{"RANK": "0", "WORLD_SIZE": "2", k1: v1, k2: v2}
		l, found, err := DetectLaunch(func(k string) string { return base[k] })
		if err != nil {
			if !errors.Is(err, errs.ErrBootstrap) || found || l != (Launch{}) {
				t.Fatalf("bad error result %+v, %v, %v", l, found, err)
			}
			return
		}
		if !found {
			return
		}
		if l.NPEs < 1 || l.NPEs > MaxNPEs || l.Rank < 0 || l.Rank >= l.NPEs {
			t.Fatalf("invalid world %+v", l)
		}
		if l.LocalSize < 0 || l.LocalSize > l.NPEs || l.LocalRank < -1 || (l.LocalSize > 0 && l.LocalRank >= l.LocalSize) {
			t.Fatalf("invalid local numbers %+v", l)
		}
		if l.UID != "" {
			if _, err := ParseUniqueID(l.UID); err != nil {
				t.Fatalf("accepted UID that does not parse: %v", err)
			}
		}
	})
}
