package secure

import (
	"crypto/tls"
	"net"
	"testing"
)

// hooked is a connection that carries an admission hook.
type hooked struct {
	net.Conn
	calls *int
}

func (h hooked) Verified() { *h.calls++ }

// layer is a connection over another one that says which (NetConn).
type layer struct{ net.Conn }

func (l layer) NetConn() net.Conn { return l.Conn }

// TestVerifiedHookLooksUnder: the hook is found on the connection, under
// a tls.Conn and under further layers that name the connection under
// them; a connection without one gives nil.
func TestVerifiedHookLooksUnder(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	calls := 0
	h := hooked{Conn: a, calls: &calls}
	for _, c := range []net.Conn{h, tls.Server(h, &tls.Config{}), tls.Server(layer{h}, &tls.Config{})} {
		f := VerifiedHook(c)
		if f == nil {
			t.Fatalf("%T: no hook", c)
		}
		f()
	}
	if calls != 3 {
		t.Errorf("hook ran %d times, want 3", calls)
	}
	if VerifiedHook(a) != nil || VerifiedHook(tls.Server(a, &tls.Config{})) != nil {
		t.Error("a connection without a hook gave one")
	}
}
