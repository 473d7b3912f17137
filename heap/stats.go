package heap

// InUse returns the bytes requested by the live objects: every symmetric
// allocation, goshmem's own team slots included. Alignment padding is not
// counted. It reads the table snapshot the hot path reads, so any
// goroutine may call it while the heap actor works.
func (h *Heap) InUse() int64 {
	var n int64
	for _, o := range h.objects() {
		if o.Live {
			n += o.Size
		}
	}
	return n
}
