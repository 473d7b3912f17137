package world

import (
	"context"
	"net"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
)

// connectTimeout bounds how long a control-plane connection takes to be
// established (TCP, TLS and protoactor's connect handshake). gRPC retries
// within it with its own backoff; a peer not reached by then is treated as
// protoactor treats any failed connection (EndpointTerminatedEvent).
// protoactor's own five fail-fast attempts, 2 s apart, took about as long.
const connectTimeout = 10 * time.Second

// dialWait bounds how long close waits for dials already under way to
// return once they are cancelled; a cancelled connect returns at once.
const dialWait = 2 * time.Second

// controlConns owns every client connection of protoactor's remote layer,
// so that none outlives the control plane.
//
// Why: protoactor's endpoint writer dials a new grpc.ClientConn for every
// connection attempt and keeps only the last one; the others are never
// closed and reconnect for ever (sockets in SYN-SENT and gRPC goroutines
// after a host vanished). An attempt also blocks the writer until gRPC's
// 20 s connect timeout when SYNs are dropped (a cut link, a partition),
// and remote.Shutdown gives up on such writers after 10 s and returns with
// them still running. So the control plane (see startControl):
//   - runs one attempt per writer (remote.Config.MaxRetryCount = 1), which
//     waits for the connection (WaitForReady) up to connectTimeout, so the
//     retrying happens inside that one ClientConn;
//   - sees every ClientConn through a stream interceptor (protoactor opens
//     its Receive stream right after dialing) and closes them all at close;
//   - dials through dial, which tracks every socket and closes those still
//     open at close, so that none outlives Finalize even if a ClientConn
//     was missed;
//   - aborts attempts still under way when it starts to close (abort), so
//     writers blocked in them end before remote.Shutdown waits for them.
type controlConns struct {
	life context.Context // cancelled by close
	end  context.CancelFunc

	mu       sync.Mutex
	closing  bool
	clients  map[*grpc.ClientConn]struct{}
	attempts map[*attempt]struct{}
	sockets  map[net.Conn]struct{}
	dials    sync.WaitGroup
}

// attempt is one protoactor connection attempt: its Receive stream, until
// that stream has received the connect response.
type attempt struct {
	cancel context.CancelFunc
	timer  *time.Timer
	up     bool
}

func newControlConns() *controlConns {
	t := &controlConns{clients: map[*grpc.ClientConn]struct{}{},
		attempts: map[*attempt]struct{}{}, sockets: map[net.Conn]struct{}{}}
	t.life, t.end = context.WithCancel(context.Background())
	return t
}

// dialOptions route protoactor's connections through t.
func (t *controlConns) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithContextDialer(t.dial), grpc.WithStreamInterceptor(t.intercept)}
}

// controlKeepAlive has the kernel probe an idle control connection after
// 2 s. gRPC raises its own client pings to one per 10 s at least, and a
// connection to a host that was cut off, idle or not, would end only at the
// next ping's timeout (12 s, measured); with the probe it ends within about
// 4 s, because gRPC also sets TCP_USER_TIMEOUT (its 2 s ping timeout) on
// the socket, which bounds how long a probe may go unanswered. Probes are
// answered by the peer's kernel, so a busy or stopped PE process does not
// trip them.
var controlKeepAlive = net.KeepAliveConfig{Enable: true, Idle: 2 * time.Second, Interval: time.Second, Count: 2}

var errControlClosing = status.Error(codes.Unavailable, "goshmem: the control plane is closing")

// dial opens a control-plane socket, cancelled when t closes. It hands
// gRPC the *net.TCPConn itself, not a wrapper: gRPC sets TCP_USER_TIMEOUT
// (keepalive) only on that type.
func (t *controlConns) dial(ctx context.Context, addr string) (net.Conn, error) {
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return nil, errControlClosing
	}
	t.dials.Add(1)
	t.mu.Unlock()
	defer t.dials.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(t.life, cancel)
	defer stop()
	conn, err := (&net.Dialer{KeepAliveConfig: controlKeepAlive}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		conn.Close()
		return nil, errControlClosing
	}
	for s := range t.sockets {
		if closed(s) {
			delete(t.sockets, s)
		}
	}
	t.sockets[conn] = struct{}{}
	return conn, nil
}

// closed reports whether gRPC has closed c: a closed socket refuses
// Control.
func closed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	return err != nil || rc.Control(func(uintptr) {}) != nil
}

// intercept records the ClientConn of every stream and bounds the
// stream's connection attempt (see controlConns).
func (t *controlConns) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	a := &attempt{cancel: cancel}
	t.mu.Lock()
	for c := range t.clients {
		if c.GetState() == connectivity.Shutdown { // its writer closed it
			delete(t.clients, c)
		}
	}
	t.clients[cc] = struct{}{}
	if t.closing {
		late := t.life.Err() != nil // close has run: nothing else will close cc
		t.mu.Unlock()
		cancel()
		if late {
			_ = cc.Close()
		}
		return nil, errControlClosing
	}
	t.attempts[a] = struct{}{}
	a.timer = time.AfterFunc(connectTimeout, func() {
		t.mu.Lock()
		up := a.up
		t.mu.Unlock()
		if !up {
			cancel()
		}
	})
	t.mu.Unlock()
	stop := context.AfterFunc(t.life, cancel)
	s, err := streamer(ctx, desc, cc, method, append(opts, grpc.WaitForReady(true))...)
	if err != nil {
		stop()
		t.done(a)
		return nil, err
	}
	return &trackedStream{ClientStream: s, t: t, a: a, stop: stop}, nil
}

// received notes a stream's RecvMsg result: the first message ends the
// attempt (the connection is up), an error ends the stream.
func (t *controlConns) received(a *attempt, err error) {
	if err != nil {
		t.done(a)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !a.up {
		a.up = true
		a.timer.Stop()
	}
}

func (t *controlConns) done(a *attempt) {
	t.mu.Lock()
	delete(t.attempts, a)
	t.mu.Unlock()
	a.timer.Stop()
	a.cancel()
}

// abort fails every connection attempt under way and any later one; the
// connections already up stay until close. The writers blocked in those
// attempts then end, and remote.Shutdown does not wait on them.
func (t *controlConns) abort() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	for a := range t.attempts {
		if !a.up {
			a.timer.Stop()
			a.cancel()
		}
	}
}

// close ends every stream, ClientConn and socket of the control plane's
// clients. It waits at most dialWait for dials under way to return.
func (t *controlConns) close() {
	t.abort()
	t.end()
	t.mu.Lock()
	clients, sockets := t.clients, t.sockets
	t.clients, t.sockets = map[*grpc.ClientConn]struct{}{}, map[net.Conn]struct{}{}
	t.mu.Unlock()
	for cc := range clients {
		_ = cc.Close() // ErrClientConnClosing if its writer closed it
	}
	for s := range sockets {
		_ = s.Close()
	}
	done := make(chan struct{})
	go func() {
		t.dials.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(dialWait):
	}
}

// trackedStream reports RecvMsg results to its attempt.
type trackedStream struct {
	grpc.ClientStream
	t    *controlConns
	a    *attempt
	stop func() bool
}

func (s *trackedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		s.stop()
	}
	s.t.received(s.a, err)
	return err
}
