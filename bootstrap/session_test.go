package bootstrap

import (
	"errors"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// CANN SHMEM's run.sh gives only a session address and a rank: every rank
// must derive the same ID, keyed by the job secret when there is one.
func TestSessionUniqueIDAgreesAcrossRanks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantTLS bool
	}{
		{"secret", map[string]string{EnvJobSecret: "s3"}, true},
		{"secret and CANN switch off", map[string]string{EnvJobSecret: "s3", EnvStoreTLSEnable: "0"}, false},
		{"CANN switch off, no secret", map[string]string{EnvStoreTLSEnable: "0"}, false},
	} {
		var ids []UniqueID
		for rank := 0; rank < 3; rank++ {
			env := map[string]string{"RANK": string(rune('0' + rank)), "WORLD_SIZE": "3", EnvUIDSessionID: "127.0.0.1:8899"}
			for k, v := range tc.env {
				env[k] = v
			}
			l, found, err := DetectLaunch(envOf(env))
			if err != nil || !found {
				t.Fatalf("%s: DetectLaunch: found %v, %v", tc.name, found, err)
			}
			uid, err := SessionUniqueID(l, false)
			if err != nil {
				t.Fatalf("%s: rank %d: %v", tc.name, rank, err)
			}
			ids = append(ids, uid)
		}
		if ids[0] != ids[1] || ids[1] != ids[2] {
			t.Errorf("%s: ranks derived different IDs", tc.name)
		}
		if ids[0].Addr != "127.0.0.1:8899" || ids[0].TLS != tc.wantTLS {
			t.Errorf("%s: ID addr %q TLS %v, want 127.0.0.1:8899 TLS %v", tc.name, ids[0].Addr, ids[0].TLS, tc.wantTLS)
		}
	}
}

func TestSessionUniqueIDSecretsDiffer(t *testing.T) {
	a, _ := SessionUniqueID(Launch{SessionID: "127.0.0.1:8899", Secret: "a"}, false)
	b, _ := SessionUniqueID(Launch{SessionID: "127.0.0.1:8899", Secret: "b"}, false)
	c, _ := SessionUniqueID(Launch{SessionID: "127.0.0.1:8898"}, true)
	d, _ := SessionUniqueID(Launch{SessionID: "127.0.0.1:8899"}, true)
	if a.Secret == b.Secret || c.Secret == d.Secret {
		t.Fatal("different secrets or sessions derived the same job secret")
	}
}

// With neither a secret nor an explicit TLS switch, Init must refuse and
// say exactly what to set.
func TestSessionUniqueIDNeedsSecretOrSwitch(t *testing.T) {
	l := Launch{Source: SourceTorchrun, Rank: 1, NPEs: 4, SessionID: "127.0.0.1:8899"}
	_, err := SessionUniqueID(l, false)
	if !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("err = %v, want ErrBootstrap", err)
	}
	for _, want := range []string{"rank 1 of 4", EnvJobSecret, EnvStoreTLSEnable + "=0", "127.0.0.1:8899"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	l.SessionID = "127.0.0.1:0"
	if _, err := SessionUniqueID(l, true); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("port 0: err = %v, want ErrInvalidArgument", err)
	}
}

func TestStoreTLSEnableParsed(t *testing.T) {
	env := map[string]string{EnvRank: "0", EnvNPEs: "1", EnvStoreTLSEnable: "maybe"}
	if _, _, err := DetectLaunch(envOf(env)); err == nil || !strings.Contains(err.Error(), EnvStoreTLSEnable) {
		t.Errorf("bad %s: err = %v", EnvStoreTLSEnable, err)
	}
	env[EnvStoreTLSEnable] = "1"
	if l, _, err := DetectLaunch(envOf(env)); err != nil || l.StoreTLSOff {
		t.Errorf("%s=1: StoreTLSOff %v, err %v", EnvStoreTLSEnable, l.StoreTLSOff, err)
	}
}
