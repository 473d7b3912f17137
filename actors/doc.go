// Package actors holds what crosses between PEs' control planes: the
// versioned msgpack messages PEs exchange (Gather, GatherReply, PEFailed,
// GlobalExit) and the agreement coordinator, which gathers one contribution
// from every member of a group (the agreement behind collective
// allocation, team creation and finalize) as a pure state machine
// (Coordinator.Step). It imports no actor runtime: the protoactor-go glue
// that delivers these messages (the actor system, the coordinator's actor,
// RunGather) is internal/actorsys, so a live world's actor system and PIDs
// never leave internal packages. Nothing on the data path passes through
// here.
package actors
