package transport

// Streamer is implemented by an Engine that can open further completion
// streams, one per OpenSHMEM context: a stream's paths reach the same peers
// as the engine's, but their operations are completed and ordered by the
// stream's own Fence and Quiet, so a Quiet on one stream never waits for
// another's traffic. An engine whose operations complete before they
// return (mapped memory) needs no streams and does not implement it.
type Streamer interface {
	NewStream() (Stream, error)
}

// Stream is one completion stream of an engine (see Streamer). Close
// releases what the stream opened (connections, goroutines) and fails its
// pending operations; it does not close the engine.
type Stream interface {
	Engine
	// Path returns the stream's path to the peer that p (a path of the
	// engine the stream came from) reaches, or false when p is not one.
	Path(p Path) (Path, bool)
}
