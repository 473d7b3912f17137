package rdma

import (
	"io"
	"net"
	"testing"

	"github.com/goshmem/shmem/internal/secure"
	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/pathbench"
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

// BenchmarkPath runs the suite every provider shares (pathbench).
func BenchmarkPath(b *testing.B) { pathbench.Run(b, benchPath) }

// BenchmarkPathTLS runs the suite over TLS with the job's certificate, as
// worlds run by default. Both ends share this process's CPUs, so the 1 MiB
// figures are bound by AES-GCM (sealing and opening on the same cores);
// crypto/tls allocates a small reader per record it reads, which shows
// in allocs/op and is not ours to remove.
func BenchmarkPathTLS(b *testing.B) {
	srv, cli, err := secure.JobConfigs([]byte("a job secret long enough for the key"))
	if err != nil {
		b.Fatal(err)
	}
	pathbench.Run(b, func(b *testing.B, heap int) (transport.Path, transport.Engine) {
		w := newWorld(b, 2, heap, func(c *Config) { c.ServerTLS, c.ClientTLS = srv, cli })
		return w.path(0, 1), w.nodes[0].Engine()
	})
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
