package shmem

// SymAs views the bytes of s as elements of U: the same symmetric memory,
// typed differently. Foreign-language bindings need it: the C API
// (capi/) addresses symmetric memory by address, so it holds the heap as one
// Sym[uint8] and types each access as the C call does (shmem_int_put,
// shmem_long_atomic_add, ...). It returns the zero Sym, which every call
// rejects, when s does not start on a multiple of U's size or does not hold
// a whole number of U.
func SymAs[U, T Elem](s Sym[T]) Sym[U] {
	bytes := uint64(s.n) * elemSize[T]()
	size := elemSize[U]()
	if s.world == 0 || s.off%size != 0 || bytes%size != 0 {
		return Sym[U]{}
	}
	return Sym[U]{world: s.world, slot: s.slot, gen: s.gen, off: s.off, n: int(bytes / size)}
}
