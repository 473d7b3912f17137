package rdma

import (
	"io"
	"net"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// The benchmarks run two nodes of one process over loopback; BenchmarkRawTCP
// is the floor they are compared with: an 8-byte round trip on a bare socket.

func benchPath(b *testing.B, heap int) (transport.Path, transport.Engine) {
	w := newWorld(b, 2, heap, nil)
	return w.path(0, 1), w.nodes[0].Engine()
}

func BenchmarkRawTCPPingPong(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var buf [8]byte
		for {
			if _, err := io.ReadFull(c, buf[:]); err != nil {
				return
			}
			if _, err := c.Write(buf[:]); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	var buf [8]byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Write(buf[:])
		if _, err := io.ReadFull(c, buf[:]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.Close()
	<-done
}

func BenchmarkPut8Quiet(b *testing.B) {
	p, eng := benchPath(b, 4096)
	src := make([]byte, 8)
	p.Put(0, src)
	eng.Quiet()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Put(0, src); err != nil {
			b.Fatal(err)
		}
		if err := eng.Quiet(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet8(b *testing.B) {
	p, _ := benchPath(b, 4096)
	dst := make([]byte, 8)
	p.Get(dst, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Get(dst, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAdd(b *testing.B) {
	p, _ := benchPath(b, 4096)
	p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut1MiB(b *testing.B) {
	const n = 1 << 20
	p, eng := benchPath(b, n)
	src := make([]byte, n)
	p.Put(0, src)
	eng.Quiet()
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Put(0, src); err != nil {
			b.Fatal(err)
		}
	}
	if err := eng.Quiet(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGet1MiB(b *testing.B) {
	const n = 1 << 20
	p, _ := benchPath(b, n)
	dst := make([]byte, n)
	p.Get(dst, 0)
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Get(dst, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawTCPStream1MiB is the bandwidth floor: 1 MiB writes on a bare
// loopback socket, drained by a reader goroutine.
func BenchmarkRawTCPStream1MiB(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1<<20)
		for {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	src := make([]byte, 1<<20)
	b.SetBytes(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(src); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.Close()
	<-done
}
