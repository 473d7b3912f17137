package shmem

import (
	"context"

	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// WithBackend makes Init return the PE that b makes instead of joining a
// world itself; every other option is then ignored. It is how goshmem's
// own backends that build a whole world at once (the simulator, sim.Run)
// hand out PEs: b's type lives in an internal package, so code outside
// this module can neither implement one nor obtain one.
func WithBackend(b core.Backend) Option {
	return func(o *options) { o.backend, o.haveBackend = b, true }
}

// backendOf returns the backend opts name, if any, without reading the
// environment: a simulated world does not depend on the launcher's.
func backendOf(opts []Option) (core.Backend, bool) {
	var o options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o.backend, o.haveBackend
}

// attach wraps the PE that b makes.
func attach(ctx context.Context, b core.Backend) (*PE, error) {
	if b == nil {
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "nil backend")
	}
	c, err := b(ctx)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errs.New("Init", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "the backend made no PE")
	}
	return newPE(c), nil
}
