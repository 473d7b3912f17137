// Package world forms a world whose PEs are separate processes: it runs the
// unique-ID rendezvous, maps the heaps of the PEs on the same host, connects
// to the others over the network transport, starts the control plane on
// protoactor's remote layer, and hands core.Start the result. The root
// package's Init calls Join; the simulator does not come here.
package world
