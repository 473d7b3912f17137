// Package membership forms a goshmem world by gossip, without an MPI
// launcher: every process of a job runs Form with the same job ID, version,
// secret and PE count and a few seed addresses; Form returns once all npes
// processes have found each other and agreed on one rank table, and the
// World it returns then reports members that die or leave.
//
// It is built on hashicorp/memberlist (SWIM). Gossip and state exchange are
// encrypted with a key derived from the job secret, so a process without the
// secret cannot join. Processes of another job or version, and any process
// beyond the npes-th, are refused by the alive and merge delegates and never
// enter the table.
//
// Agreement ("sealing"): each process computes the table from its own view
// and publishes the table's hash in its gossip metadata; a process seals when
// every member of its table publishes the same hash, and then marks itself
// sealed, so that a process whose view moved on after publishing that hash
// adopts the sealed table instead of waiting for a different one. The view
// is re-evaluated on every membership event and on a JoinInterval tick, and
// an unsealed hash is re-announced every PushPullInterval, because on a
// loaded host UDP gossip is dropped and sealing needs every member's
// current hash.
package membership
