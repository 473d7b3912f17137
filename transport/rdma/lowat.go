package rdma

import (
	"io"
	"net"
	"syscall"
)

// Payloads of at least lowWaterMin bytes are read with the socket's
// SO_RCVLOWAT raised to what is still missing, at most lowWaterMax.
const (
	lowWaterMin = 32 << 10
	lowWaterMax = 128 << 10
)

// lowWater makes a parked read of a large put payload wake once per
// lowWaterMax bytes instead of once per arriving segment: the kernel
// reports the socket readable only once SO_RCVLOWAT bytes are queued.
// Waking a parked goroutine costs several microseconds, and a 256 KiB chunk
// arrives in 4-8 segments. The mark never exceeds what the peer still owes
// for the payload, so a wait for it always ends; a read that finds data
// returns it whatever the mark (only readiness honours it), so polling
// reads are unaffected. Not used under TLS, whose records make the bytes on
// the socket differ from the bytes read.
type lowWater struct {
	rc   syscall.RawConn
	cur  int // the socket's SO_RCVLOWAT
	next int
	err  error
	set  func(fd uintptr) // bound once, so fit does not allocate
}

// newLowWater returns nil for a connection that is not TCP.
func newLowWater(c net.Conn) *lowWater {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	lw := &lowWater{rc: rc, cur: 1}
	lw.set = lw.apply
	return lw
}

func (lw *lowWater) apply(fd uintptr) {
	lw.err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, lw.next)
}

// fit sets the mark for a read that still needs rem bytes (0: back to 1).
// A socket that refuses the option keeps its mark at 1.
func (lw *lowWater) fit(rem int) {
	v := min(rem, lowWaterMax)
	if rem < lowWaterMin {
		v = 1
	}
	if v == lw.cur || lw.err != nil {
		return
	}
	lw.next = v
	if err := lw.rc.Control(lw.set); err != nil && lw.err == nil {
		lw.err = err
	}
	if lw.err == nil {
		lw.cur = v
	}
}

// readPayload fills dst from sc's stream: what the buffer holds, then
// straight from the connection (as bufio does for large reads), under a
// low-water mark when sc has one.
func (sc *serverConn) readPayload(dst []byte) error {
	if sc.lw == nil || len(dst) < lowWaterMin {
		return sc.src.readFull(dst)
	}
	k := sc.src.plain.take(dst) // what the buffer holds
	for k < len(dst) {
		sc.lw.fit(len(dst) - k)
		m, err := sc.c.Read(dst[k:])
		k += m
		if err != nil && k < len(dst) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	sc.lw.fit(0)
	return nil
}
