package shmem_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/goshmem/shmem"
)

// TestInitWarnsOfGuessableSecrets: a job secret the user chose that is
// short, or none at all (a session start-up with TLS off), is said at
// WARN when Init starts, since a PE hands the job's certificate, a hash
// of the secret, to anyone who opens a TLS connection to it: a stranger
// can test guesses offline. Before, SHMEM_JOB_SECRET=s started a world
// in silence, and the session without a secret logged only that TLS was
// off, "authenticated by the job secret only", of a secret anyone could
// compute from the address.
func TestInitWarnsOfGuessableSecrets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String() // nobody listens: Init fails soon after it starts
	ln.Close()
	host, port, _ := net.SplitHostPort(dead)
	for _, c := range []struct {
		name string
		env  map[string]string
		opts []shmem.Option
		says string // "" for no warning about the secret
	}{
		{"session without a secret", map[string]string{"SHMEM_UID_SESSION_ID": dead, "SMEM_CONF_STORE_TLS_ENABLE": "0"}, nil,
			"no job secret and TLS off"},
		{"session with a short secret", map[string]string{"SHMEM_UID_SESSION_ID": dead, "SHMEM_JOB_SECRET": "s3cret"}, nil,
			"the job secret from SHMEM_JOB_SECRET is 6 bytes"},
		{"torchrun with a short secret", map[string]string{"MASTER_ADDR": host, "MASTER_PORT": port, "SHMEM_JOB_SECRET": "s"}, nil,
			"the job secret from SHMEM_JOB_SECRET is 1 bytes"},
		{"torchrun with a long secret", map[string]string{"MASTER_ADDR": host, "MASTER_PORT": port, "SHMEM_JOB_SECRET": "0123456789abcdef0123"}, nil,
			""},
		{"gossip with a short secret", nil, []shmem.Option{shmem.WithSeeds([]string{dead}, 2), shmem.WithJobSecret("job7")},
			"the job secret from WithJobSecret is 4 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"SHMEM_UNIQUE_ID", "SHMEM_UID_FILE", "SHMEM_UID_SESSION_ID", "SMEM_CONF_STORE_TLS_ENABLE", "SHMEM_JOB_SECRET", "MASTER_ADDR", "MASTER_PORT"} {
				t.Setenv(k, "")
			}
			if c.opts == nil {
				t.Setenv("SHMEM_RANK", "1")
				t.Setenv("SHMEM_NPES", "2")
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var log syncBuffer
			opts := append([]shmem.Option{shmem.WithLogger(slog.New(slog.NewTextHandler(&log, nil))), shmem.WithTimeout(200 * time.Millisecond)}, c.opts...)
			if p, err := shmem.Init(context.Background(), opts...); err == nil {
				p.Finalize()
				t.Fatal("Init succeeded with nobody at rank 0's address")
			}
			got := log.String()
			switch {
			case c.says == "" && strings.Contains(got, "job secret from"):
				t.Fatalf("a 20-byte secret was warned of:\n%s", got)
			case c.says != "" && !strings.Contains(got, "level=WARN msg=\""+c.says):
				t.Fatalf("no WARN saying %q; the log:\n%s", c.says, got)
			}
		})
	}
}
