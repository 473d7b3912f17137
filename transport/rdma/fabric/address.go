package fabric

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/goshmem/shmem/internal/errs"
)

// Address is what a peer needs to reach one node: the libfabric endpoint
// name, and where and under which key the node's heap and its statics
// region (Config.Statics) are registered. Nodes exchange it as bytes
// (Node.Address, Node.Connect), which the world bootstrap carries like any
// other start-up blob.
type Address struct {
	Rank     int    // the node's PE number
	Provider string // libfabric provider, e.g. "tcp;ofi_rxm" or "verbs;ofi_rxm"
	HeapBase uint64 // virtual address of the heap (used when the provider wants FI_MR_VIRT_ADDR)
	HeapSize uint64 // bytes of heap that peers may address
	Key      uint64 // the heap registration's remote key
	// The statics region (Config.Statics) as the heap; all three are 0 for
	// a node without one. StaticsBase is the region's virtual address,
	// not transport.StaticsBase, the offset at which peers address it.
	StaticsBase uint64
	StaticsSize uint64
	StaticsKey  uint64
	EP          []byte // the endpoint name from fi_getname
}

// Limits of the encoding; DecodeAddress refuses anything beyond them.
const (
	MaxEPName   = 512 // endpoint names are sockaddrs or verbs GIDs+QPNs: tens of bytes
	MaxProvider = 64
	addrMagic   = "GSHF"
	// addrVersion 2 added the statics region. Every PE of a job runs the
	// same build, so another version is refused rather than read.
	addrVersion = 2
	addrFixed   = 4 + 1 + 4 + 3*8 + 3*8 + 1 + 2 // magic, version, rank, heap and statics (base, size, key each), provider len, ep len
)

// MarshalBinary encodes a. It fails only on an Address that DecodeAddress
// would refuse.
func (a Address) MarshalBinary() ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, addrFixed+len(a.Provider)+len(a.EP))
	b = append(b, addrMagic...)
	b = append(b, addrVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(a.Rank))
	b = binary.BigEndian.AppendUint64(b, a.HeapBase)
	b = binary.BigEndian.AppendUint64(b, a.HeapSize)
	b = binary.BigEndian.AppendUint64(b, a.Key)
	b = binary.BigEndian.AppendUint64(b, a.StaticsBase)
	b = binary.BigEndian.AppendUint64(b, a.StaticsSize)
	b = binary.BigEndian.AppendUint64(b, a.StaticsKey)
	b = append(b, byte(len(a.Provider)))
	b = append(b, a.Provider...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(a.EP)))
	b = append(b, a.EP...)
	return b, nil
}

// DecodeAddress parses bytes from another node. They come from outside the
// process, so every length, the rank and the heap and statics ranges are
// checked; the result shares no memory with b.
func DecodeAddress(b []byte) (Address, error) {
	bad := func(format string, args ...any) (Address, error) {
		return Address{}, errs.New("fabric.DecodeAddress", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	if len(b) < addrFixed {
		return bad("address of %d bytes, need at least %d", len(b), addrFixed)
	}
	if string(b[:4]) != addrMagic {
		return bad("not a fabric address (magic %q)", b[:4])
	}
	if b[4] != addrVersion {
		return bad("address version %d, want %d (every PE of a job must run the same goshmem build)", b[4], addrVersion)
	}
	var a Address
	rank := binary.BigEndian.Uint32(b[5:])
	if rank > math.MaxInt32 {
		return bad("rank %d", rank)
	}
	a.Rank = int(rank)
	a.HeapBase = binary.BigEndian.Uint64(b[9:])
	a.HeapSize = binary.BigEndian.Uint64(b[17:])
	a.Key = binary.BigEndian.Uint64(b[25:])
	a.StaticsBase = binary.BigEndian.Uint64(b[33:])
	a.StaticsSize = binary.BigEndian.Uint64(b[41:])
	a.StaticsKey = binary.BigEndian.Uint64(b[49:])
	rest := b[57:]
	pl := int(rest[0])
	rest = rest[1:]
	if len(rest) < pl+2 {
		return bad("provider name of %d bytes overruns the address", pl)
	}
	a.Provider = string(rest[:pl])
	rest = rest[pl:]
	el := int(binary.BigEndian.Uint16(rest))
	rest = rest[2:]
	if len(rest) != el {
		return bad("endpoint name of %d bytes, %d left", el, len(rest))
	}
	a.EP = append([]byte(nil), rest...)
	if err := a.check(); err != nil {
		return Address{}, err
	}
	return a, nil
}

// check enforces what both directions promise.
func (a Address) check() error {
	bad := func(format string, args ...any) error {
		return errs.New("fabric.Address", a.Rank, errs.NoPE, errs.ErrInvalidArgument, format, args...)
	}
	if a.Rank < 0 || a.Rank > math.MaxInt32 {
		return bad("rank %d", a.Rank)
	}
	if len(a.Provider) == 0 || len(a.Provider) > MaxProvider {
		return bad("provider name of %d bytes, want 1..%d", len(a.Provider), MaxProvider)
	}
	for i := 0; i < len(a.Provider); i++ {
		if c := a.Provider[i]; c < 0x21 || c > 0x7e {
			return bad("provider name has byte %#x", c)
		}
	}
	if len(a.EP) == 0 || len(a.EP) > MaxEPName {
		return bad("endpoint name of %d bytes, want 1..%d", len(a.EP), MaxEPName)
	}
	if _, carry := bits.Add64(a.HeapBase, a.HeapSize, 0); carry != 0 {
		return bad("heap [%#x, +%d) wraps around", a.HeapBase, a.HeapSize)
	}
	if a.HeapSize > math.MaxInt {
		return bad("heap of %d bytes", a.HeapSize)
	}
	if _, carry := bits.Add64(a.StaticsBase, a.StaticsSize, 0); carry != 0 {
		return bad("statics region [%#x, +%d) wraps around", a.StaticsBase, a.StaticsSize)
	}
	if a.StaticsSize > math.MaxInt {
		return bad("statics region of %d bytes", a.StaticsSize)
	}
	if a.StaticsSize == 0 && (a.StaticsBase != 0 || a.StaticsKey != 0) {
		// A node without a region names none: a base or key here means
		// the bytes were not made by Node.Address.
		return bad("statics region of 0 bytes at %#x with key %#x", a.StaticsBase, a.StaticsKey)
	}
	return nil
}
