//go:build amd64 && !race

package udma

// storeWord is a plain store. On amd64 an aligned 8-byte store is
// single-copy atomic, the peer reads the word with an atomic load, and
// stores become visible in program order (TSO), so every write of this
// PE before the signal is seen before it.
func storeWord(w *uint64, v uint64) { *w = v }
