package actors

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// maxDepth bounds nesting: our messages nest at most two levels
// ([][]byte inside a map), and a deep input would otherwise exhaust the stack
// of msgpack's recursive decoder (see NOTES.md).
const maxDepth = 4

// checkMsgpack walks b as exactly one msgpack value and fails if any header
// claims more bytes or elements than b holds, nests deeper than maxDepth, or
// uses a type control messages never contain (extensions, the reserved byte).
// After it passes, msgpack's allocations are bounded by len(b).
func checkMsgpack(b []byte) error {
	rest, err := skipValue(b, 0)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%d trailing bytes", len(rest))
	}
	return nil
}

var errShort = errors.New("truncated value")

func skipValue(b []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	if len(b) == 0 {
		return nil, errShort
	}
	c, b := b[0], b[1:]
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return b, nil
	case c >= 0x80 && c <= 0x8f:
		return skipElems(b, 2*int(c&0x0f), depth)
	case c >= 0x90 && c <= 0x9f:
		return skipElems(b, int(c&0x0f), depth)
	case c >= 0xa0 && c <= 0xbf:
		return skipBytes(b, int(c&0x1f))
	}
	switch c {
	case 0xcc, 0xd0:
		return skipBytes(b, 1)
	case 0xcd, 0xd1:
		return skipBytes(b, 2)
	case 0xca, 0xce, 0xd2:
		return skipBytes(b, 4)
	case 0xcb, 0xcf, 0xd3:
		return skipBytes(b, 8)
	case 0xc4, 0xd9: // bin8, str8
		n, b, err := length(b, 1)
		if err != nil {
			return nil, err
		}
		return skipBytes(b, n)
	case 0xc5, 0xda:
		n, b, err := length(b, 2)
		if err != nil {
			return nil, err
		}
		return skipBytes(b, n)
	case 0xc6, 0xdb:
		n, b, err := length(b, 4)
		if err != nil {
			return nil, err
		}
		return skipBytes(b, n)
	case 0xdc, 0xde: // array16, map16
		n, b, err := length(b, 2)
		if err != nil {
			return nil, err
		}
		if c == 0xde {
			n *= 2
		}
		return skipElems(b, n, depth)
	case 0xdd, 0xdf:
		n, b, err := length(b, 4)
		if err != nil {
			return nil, err
		}
		if c == 0xdf {
			n *= 2
		}
		return skipElems(b, n, depth)
	}
	return nil, fmt.Errorf("type byte 0x%02x not allowed", c)
}

func length(b []byte, size int) (int, []byte, error) {
	if len(b) < size {
		return 0, nil, errShort
	}
	switch size {
	case 1:
		return int(b[0]), b[1:], nil
	case 2:
		return int(binary.BigEndian.Uint16(b)), b[2:], nil
	}
	return int(binary.BigEndian.Uint32(b)), b[4:], nil
}

func skipBytes(b []byte, n int) ([]byte, error) {
	if n < 0 || n > len(b) {
		return nil, errShort
	}
	return b[n:], nil
}

func skipElems(b []byte, n, depth int) ([]byte, error) {
	if n > len(b) { // every element takes at least one byte
		return nil, errShort
	}
	var err error
	for i := 0; i < n; i++ {
		if b, err = skipValue(b, depth+1); err != nil {
			return nil, err
		}
	}
	return b, nil
}
