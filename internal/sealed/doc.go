// Package sealed carries a connection's bytes, once its TLS 1.3 handshake
// and authentication are done, in large records sealed with AES-GCM under
// keys exported from that TLS session, instead of crypto/tls's 16 KiB
// records.
//
// Why: crypto/tls seals at most 16 KiB per record and copies each record
// twice more on the way in (socket buffer, record buffer, caller), which
// held goshmem's 1 MiB puts under TLS to a third of plain TCP. Here a
// record holds up to MaxRecord bytes, is sealed straight into the buffer
// the socket write takes, and is opened in place in a read buffer that
// stays in the cache, from which the caller copies only authenticated
// plaintext.
//
// Security (why this is as safe as the TLS records it replaces):
//   - Keys: one 32-byte secret per direction from the session's exporter
//     (RFC 8446 §7.5, label ExporterLabel), from which HKDF-Expand derives
//     the direction's AES key (the TLS suite's key length) and 12-byte IV.
//     The exporter secret is unique to the handshake's transcript, so no
//     two connections, and no two directions, share a key; the two
//     directions' secrets are independent exporter outputs, so a record
//     reflected back to its sender fails authentication.
//   - Nonces: IV XOR the direction's record number (64 bits, from 0), as
//     TLS 1.3 builds them (§5.3). The number is never sent: it is what the
//     receiver expects next, so a record replayed, dropped, reordered or
//     moved to another connection fails authentication. It never repeats:
//     it only counts up, and reaching 2^64 records is refused.
//   - Key limits: after every RekeyEvery records both ends replace the
//     direction's secret by HKDF-Expand(secret, "goshmem bulk update"), as
//     TLS 1.3's KeyUpdate does, so one key seals at most RekeyEvery ×
//     MaxRecord = 2^34 bytes, below AES-GCM's 2^38 bytes per key that
//     §5.5's limit (2^24.5 full records) allows.
//   - Framing: a record is a 4-byte little-endian plaintext length, then
//     the ciphertext and its 16-byte tag. The length is the record's
//     additional data, so it is authenticated; before the body is read it
//     is bounded (1..MaxRecord), so a hostile length costs no allocation
//     and no read past the buffer.
//   - Nothing unauthenticated leaves the package: a record is opened in
//     place inside the package's own read buffer, and Read (like Peek,
//     Discard and ReadFull, which serve frames in place) hands out only
//     plaintext of a record whose tag checked. (Go's amd64 GCM decrypts
//     into the destination before it compares the tag, so opening straight into a
//     caller's memory — the symmetric heap — would let a forged record
//     write it.) Any failure is final: the connection returns the same
//     error from then on.
//   - Truncation: a stream cut between records reads as io.EOF, cut inside
//     one as io.ErrUnexpectedEOF — what crypto/tls reports for a TCP close
//     without close_notify; goshmem's frames are numbered and acknowledged,
//     so a cut stream loses no write silently.
//   - Switching: Exchange sends and reads one marker through TLS before
//     either side uses sealed records, so every TLS record the peer sent
//     during or after its handshake (session tickets) has been consumed
//     by crypto/tls first; the caller must give New exactly the bytes read
//     from the socket past that marker.
package sealed
