package membership

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// TestCancelledFormCutsAStalledJoin: Form's only seed accepts the join's
// stream and never answers. Cancelled meanwhile, Form waited for that join
// for memberlist's whole TCP timeout (5 s by default; here longer than the
// test, whose own deadline would catch the wait) before it returned; it
// now cuts its streams in flight when it gives up.
func TestCancelledFormCutsAStalledJoin(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	log, _ := quietLogger()
	cfg := job(t, 1, 2, log)[0]
	cfg.Seeds = []string{ln.Addr().String()}
	cfg.BindPort = 0
	cfg.tcpTimeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	formed := make(chan error, 1)
	go func() {
		w, err := Form(ctx, cfg)
		if w != nil {
			w.Close()
		}
		formed <- err
	}()
	c, err := ln.Accept() // the join's stream, held silent
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	if err := <-formed; !errors.Is(err, context.Canceled) || !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("Form: %v, want context.Canceled and ErrBootstrap", err)
	}
}
