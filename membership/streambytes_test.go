package membership

import (
	"errors"
	"io"
	"log"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestGossipStreamBytesBounded: a stranger without the secret opens a
// gossip stream, declares an encrypted message of nearly 20 MB (the most
// memberlist accepts before it authenticates anything) and sends 1 MiB;
// memberlist buffered all of it (32 such streams: 640 MB in one PE). The
// transport's stream ends after streamBytes, with errStreamTooLong.
func TestGossipStreamBytesBounded(t *testing.T) {
	const max = 4 << 10
	tr, err := newStreamLimit("127.0.0.1", 0, maxStreams, max, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown()
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(tr.GetAutoBindPort())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		// encryptMsg, a declared length of 20,000,000, then junk.
		_, _ = c.Write(append([]byte{10, 0x01, 0x31, 0x2d, 0x00}, make([]byte, 1<<20)...))
	}()
	in := <-tr.StreamCh()
	defer in.Close()
	in.SetReadDeadline(time.Now().Add(30 * time.Second)) // bounds a hang only
	got, err := io.ReadAll(in)
	if !errors.Is(err, errStreamTooLong) || len(got) != max {
		t.Fatalf("read %d bytes, then %v; want %d, then %v", len(got), err, max, errStreamTooLong)
	}
}

// TestStreamBytesHoldsAWorldsState: the bound leaves room for a push-pull
// of every member's largest record, the members of a world of 65536 PEs
// included (memberlist refuses more than 20 MB itself).
func TestStreamBytesHoldsAWorldsState(t *testing.T) {
	for _, npes := range []int{1, 16, 4096, maxNPEs} {
		if need := int64(npes) * (metaMaxSize + 2*maxIDLen + 64); streamBytes(npes) < need {
			t.Errorf("npes %d: bound %d < %d", npes, streamBytes(npes), need)
		}
	}
}
