package world

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// testWait bounds the waits of these tests; reaching it fails them. It is
// below connectTimeout, which would end a stuck attempt without abort.
const testWait = connectTimeout / 2

var testStream = &grpc.StreamDesc{StreamName: "Receive", ServerStreams: true, ClientStreams: true}

// noLeaks checks, after the test and its cleanups, that no goroutine it
// started is left.
func noLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// dialTracked makes a ClientConn the way protoactor's endpoint writer does,
// with the control plane's options.
func dialTracked(t *testing.T, cc *controlConns, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.Dial(addr, append(cc.dialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// openStream opens a stream on conn in the background; its result
// arrives on the channel.
func openStream(conn *grpc.ClientConn) <-chan error {
	res := make(chan error, 1)
	go func() {
		_, err := conn.NewStream(context.Background(), testStream, "/goshmem.Test/Receive")
		res <- err
	}()
	return res
}

// silentListener accepts TCP connections and never answers, as a host
// whose gRPC server is stuck would: the client waits for the HTTP/2
// preface. It returns the address and channels that report every
// connection it accepted, and when the client closed it.
func silentListener(t *testing.T) (addr string, accepted, closed <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acc, cl := make(chan struct{}, 16), make(chan struct{}, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			acc <- struct{}{}
			go func() {
				_, _ = io.Copy(io.Discard, c) // returns when the client closes
				c.Close()
				cl <- struct{}{}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String(), acc, cl
}

// receive waits for n signals on ch.
func receive(t *testing.T, ch <-chan struct{}, n int, what string) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-ch:
		case <-time.After(testWait):
			t.Fatalf("%s: %d of %d after %v", what, i, n, testWait)
		}
	}
}

func await(t *testing.T, res <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-res:
		return err
	case <-time.After(testWait):
		t.Fatalf("%s still blocked after %v", what, testWait)
		return nil
	}
}

// TestControlConnsAbortAndClose: attempts stuck connecting end when the
// control plane starts to close, later attempts fail at once, and close
// shuts every ClientConn and socket, including those of attempts that
// protoactor's retries abandoned.
func TestControlConnsAbortAndClose(t *testing.T) {
	noLeaks(t)
	addr, accepted, closedByClient := silentListener(t)
	cc := newControlConns()
	// protoactor's writer dials a new ClientConn per attempt and keeps the
	// last one only.
	first, second := dialTracked(t, cc, addr), dialTracked(t, cc, addr)
	r1, r2 := openStream(first), openStream(second)
	receive(t, accepted, 2, "connections reaching the silent server")
	cc.abort()
	for i, res := range []<-chan error{r1, r2} {
		if err := await(t, res, "a connection attempt"); err == nil {
			t.Errorf("attempt %d succeeded against a silent server", i)
		}
	}
	late := dialTracked(t, cc, addr)
	if err := await(t, openStream(late), "an attempt after abort"); status.Code(err) != codes.Unavailable {
		t.Errorf("attempt after abort: %v, want Unavailable (closing)", err)
	}
	cc.close()
	for i, conn := range []*grpc.ClientConn{first, second, late} {
		if s := conn.GetState(); s != connectivity.Shutdown {
			t.Errorf("ClientConn %d is %v after close, want Shutdown", i, s)
		}
	}
	receive(t, closedByClient, 2, "sockets closed by close")
}

// TestControlConnsKeepEstablishedUntilClose: abort leaves a connection
// that is up alone (its last messages still flow); close ends it.
func TestControlConnsKeepEstablishedUntilClose(t *testing.T) {
	noLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got, ended := make(chan error, 1), make(chan error, 1)
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		// Like protoactor's connect response, then messages until the end.
		if err := ss.SendMsg(&emptypb.Empty{}); err != nil {
			return err
		}
		var m emptypb.Empty
		got <- ss.RecvMsg(&m)
		err := ss.RecvMsg(&m)
		ended <- err
		return err
	}))
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()

	cc := newControlConns()
	conn := dialTracked(t, cc, ln.Addr().String())
	s, err := conn.NewStream(context.Background(), testStream, "/goshmem.Test/Receive")
	if err != nil {
		t.Fatal(err)
	}
	var m emptypb.Empty
	if err := s.RecvMsg(&m); err != nil {
		t.Fatalf("connect response: %v", err)
	}
	cc.abort()
	if err := s.Context().Err(); err != nil {
		t.Fatalf("abort ended an established stream: %v", err)
	}
	if err := s.SendMsg(&emptypb.Empty{}); err != nil {
		t.Fatalf("send after abort: %v", err)
	}
	if err := await(t, got, "the message sent after abort"); err != nil {
		t.Fatalf("the server did not get the message sent after abort: %v", err)
	}
	cc.close()
	if err := s.RecvMsg(&m); err == nil {
		t.Error("stream still receives after close")
	}
	if err := await(t, ended, "the server's stream"); err == nil {
		t.Error("the server's stream still receives after close")
	}
	if st := conn.GetState(); st != connectivity.Shutdown {
		t.Errorf("ClientConn is %v after close, want Shutdown", st)
	}
}
