//go:build !race

package udma

// storeWord is a plain store: on amd64 and arm64 an aligned 8-byte store
// is single-copy atomic, and the peer reads the word with an atomic load.
func storeWord(w *uint64, v uint64) { *w = v }
