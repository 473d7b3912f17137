package world

import (
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// NewStream opens a completion stream (a context's) on the wrapped engine,
// whose paths report a GlobalExit as the wrapped ones do; an engine
// without streams refuses, and the context then shares this one.
func (x exitAwareEngine) NewStream() (transport.Stream, error) {
	s, ok := x.Engine.(transport.Streamer)
	if !ok {
		return nil, errs.New("CreateCtx", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "the engine has no streams")
	}
	st, err := s.NewStream()
	if err != nil {
		return nil, err
	}
	return exitAwareStream{st, x.p}, nil
}

type exitAwareStream struct {
	transport.Stream
	p **core.PE
}

func (s exitAwareStream) Fence() error { return settle(s.p, s.Stream.Fence()) }
func (s exitAwareStream) Quiet() error { return settle(s.p, s.Stream.Quiet()) }

// Path returns the stream's path to the peer p reaches, wrapped like p.
func (s exitAwareStream) Path(p transport.Path) (transport.Path, bool) {
	e, ok := p.(exitAware)
	if !ok {
		return nil, false
	}
	q, ok := s.Stream.Path(e.Path)
	if !ok {
		return nil, false
	}
	return exitAware{q, s.p}, true
}
