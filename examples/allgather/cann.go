package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
)

// cannArgs are CANN SHMEM's allgather arguments: its binary is started once
// per NPU as PE fpe+rank of pes, all meeting at ipport.
type cannArgs struct {
	ipport string // tcp://ip:port, rank 0's rendezvous address
	rank   int    // this process's index among the gnpus started here
	fpe    int    // the PE number of index 0 on this host
	gnpus  int    // processes started on this host
}

// typeNames maps CANN SHMEM's type names, and goshmem's own, to goshmem's.
var typeNames = map[string]string{
	"int32": "int32", "int32_t": "int32", "int": "int32",
	"float16": "float16", "float16_t": "float16", "half": "float16",
	"bfloat16": "bfloat16", "bfloat16_t": "bfloat16",
}

func canonicalType(name string) (string, error) {
	if t, ok := typeNames[name]; ok {
		return t, nil
	}
	return "", fmt.Errorf("unknown -type %q (int32_t, float16_t or bfloat16_t; int32, float16 or bfloat16)", name)
}

// initOptions turns -ipport into the options of shmem.Init for PE
// fpe+rank of npes: the ID every process derives from the address, as
// SHMEM_UID_SESSION_ID does (SHMEM_JOB_SECRET keys TLS; without it TLS
// must be off by SMEM_CONF_STORE_TLS_ENABLE=0).
func (a cannArgs) initOptions(npes int) ([]shmem.Option, error) {
	hostport, ok := strings.CutPrefix(a.ipport, "tcp://")
	if !ok {
		return nil, fmt.Errorf("-ipport %q: want tcp://ip:port", a.ipport)
	}
	pe := a.fpe + a.rank
	if a.rank < 0 || a.fpe < 0 || pe >= npes || a.gnpus > 0 && a.rank >= a.gnpus {
		return nil, fmt.Errorf("-rank %d -fpe %d -gnpus %d: PE %d is not in 0..%d", a.rank, a.fpe, a.gnpus, pe, npes-1)
	}
	l := bootstrap.Launch{Source: "-ipport", Rank: pe, NPEs: npes, SessionID: hostport, Secret: os.Getenv(bootstrap.EnvJobSecret)}
	off := os.Getenv(bootstrap.EnvStoreTLSEnable)
	l.StoreTLSOff = off == "0" || strings.EqualFold(off, "false")
	uid, err := bootstrap.SessionUniqueID(l, false)
	if err != nil {
		return nil, err
	}
	opts := []shmem.Option{shmem.WithUniqueID(uid, pe, npes)}
	if !uid.TLS {
		opts = append(opts, shmem.WithoutTLS())
	}
	return opts, nil
}
