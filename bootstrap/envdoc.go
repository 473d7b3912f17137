package bootstrap

// OpenSHMEM's start-up information variables: with any value, PE 0 prints
// goshmem's version and the OpenSHMEM version it implements (EnvVersion),
// or this package's EnvTable (EnvInfo), to standard output once its world
// is up.
const (
	EnvVersion = "SHMEM_VERSION"
	EnvInfo    = "SHMEM_INFO"
)

// EnvTable is the Markdown table of every environment variable goshmem
// reads at start-up; the README and shmem-config print it verbatim, so it
// is the one place to update when a variable changes.
const EnvTable = `| Variable | Read by | Meaning |
|---|---|---|
| ` + "`SHMEM_RANK`" + ` | Init | this PE's number (goshmem launcher; wins over all launchers below) |
| ` + "`SHMEM_NPES`" + ` | Init | number of PEs, 1..65536 |
| ` + "`SHMEM_LOCAL_RANK`" + ` | Init | PE number on this node (optional) |
| ` + "`SHMEM_LOCAL_SIZE`" + ` | Init | PEs on this node (optional) |
| ` + "`SHMEM_UNIQUE_ID`" + ` | Init | unique ID token (` + "`gsu1.…`" + `) naming the rank-0 rendezvous |
| ` + "`SHMEM_UID_FILE`" + ` | Init | file through which PE 0 hands the unique ID to the others |
| ` + "`SHMEM_JOB_SECRET`" + ` | Init | job secret, passed through to the rendezvous |
| ` + "`SHMEM_LAUNCHER_PID`" + ` | Init | pid of the goshmem launcher (shmemrun) that started this PE: Init arms a parent-death signal and fails if that launcher is no longer an ancestor |
| ` + "`SHMEM_STATUS_FD`" + ` | Init | descriptor of the socket on which this PE tells the goshmem launcher (shmemrun) that it finalized, called GlobalExit, saw another PE fail, or had an operation failed by another PE's early Finalize, so that the launcher names the PE that ended the job; set by the launcher |
| ` + "`SLURM_PROCID`" + `, ` + "`SLURM_NTASKS`" + `, ` + "`SLURM_LOCALID`" + ` | Init | rank, size, local rank under Slurm (2nd priority) |
| ` + "`OMPI_COMM_WORLD_RANK`" + `, ` + "`OMPI_COMM_WORLD_SIZE`" + `, ` + "`OMPI_COMM_WORLD_LOCAL_RANK`" + `, ` + "`OMPI_COMM_WORLD_LOCAL_SIZE`" + ` | Init | rank, size, local rank and size under Open MPI (3rd) |
| ` + "`PMI_RANK`" + `, ` + "`PMI_SIZE`" + ` | Init | rank and size under a PMI launcher (4th) |
| ` + "`RANK`" + `, ` + "`WORLD_SIZE`" + `, ` + "`LOCAL_RANK`" + `, ` + "`LOCAL_WORLD_SIZE`" + ` | Init | rank, size, local rank and size under torchrun (5th) |
| ` + "`MASTER_ADDR`" + `, ` + "`MASTER_PORT`" + ` | Init | rendezvous host and port (torchrun style; honoured under any launcher) |
| ` + "`SHMEM_UID_SESSION_ID`" + ` | GetUniqueID, Init | rendezvous listen address: ` + "`ip:port`" + `, ` + "`[ipv6]:port`" + `, ` + "`[ipv6%zone]:port`" + `, ` + "`host:port`" + `; wins over SHMEM_UID_SOCK_IFNAME. For Init, with a rank and no ` + "`SHMEM_UNIQUE_ID`" + ` or ` + "`SHMEM_UID_FILE`" + `: rank 0's address for CANN SHMEM's script start-up (wins over ` + "`MASTER_ADDR`" + `) |
| ` + "`SMEM_CONF_STORE_TLS_ENABLE`" + ` | Init | CANN SHMEM's switch: ` + "`0`" + ` turns TLS off for the ` + "`SHMEM_UID_SESSION_ID`" + ` start-up (default on, which needs ` + "`SHMEM_JOB_SECRET`" + `) |
| ` + "`SHMEM_UID_SOCK_IFNAME`" + ` | GetUniqueID | interface to listen on: ` + "`name`" + `, ` + "`name:inet4`" + `, ` + "`name:inet6`" + ` (no suffix: IPv4 preferred, IPv6 fallback); free port |
| (neither) | GetUniqueID | first up, running interface not named lo*/docker*/veth*/br-*/virbr*/tun*/tap* with a non-loopback, non-link-local address, IPv4 preferred; free port |
| ` + "`SHMEM_SYMMETRIC_SIZE`" + ` | Init | symmetric heap bytes per PE, as OpenSHMEM writes it: a number, then optionally k, m, g or t (binary), e.g. ` + "`1073741824`" + `, ` + "`512m`" + `, ` + "`3.1M`" + ` (its integer ceiling: 3250586), ` + "`2G`" + `, ` + "`1GiB`" + ` (what follows the unit is ignored) |
| ` + "`SHMEM_SYMMETRIC_SIZE_MAX`" + ` | Init | the size the heap may grow to when an allocation does not fit (same syntax); default: no growth. Every PE must give the same |
| ` + "`SHMEM_VERSION`" + ` | Init | any value: PE 0 prints goshmem's version and the OpenSHMEM version it implements once the world is up |
| ` + "`SHMEM_INFO`" + ` | Init | any value: PE 0 prints this table once the world is up |
| ` + "`SHMEM_DEBUG`" + ` | Init | any value: debugging messages (` + "`SHMEM_LOG_LEVEL=DEBUG`" + `, unless that variable is set) |
| ` + "`SHMEM_LOG_LEVEL`" + ` | Init | ` + "`DEBUG`" + `, ` + "`INFO`" + `, ` + "`WARN`" + ` (default), ` + "`ERROR`" + `, any case |
| ` + "`SHMEM_LOG_PATH`" + ` | Init | directory for ` + "`goshmem-<pid>.log`" + ` (dir 0700, file 0600); console then silent unless SHMEM_LOG_TO_STDOUT |
| ` + "`SHMEM_LOG_TO_STDOUT`" + ` | Init | ` + "`1`" + `/` + "`true`" + `: log to stdout instead of stderr |
| ` + "`SHMEM_INIT_TIMEOUT`" + ` | Init | start-up bound, a Go duration (` + "`90s`" + `); default 60s; set by shmemrun --timeout |
| ` + "`SHMEM_FAILURE_TIMEOUT`" + ` | Init | a Go duration in [600ms, 1h]: a PE silent that long on the control lane (killed, cut off, or paused by a debugger, a VM pause or a cgroup freeze) is suspected, and declared failed by its peers unless another PE hears it within a third of the bound more; default ` + "`3s`" + ` (declared within 4 s) |
| ` + "`SHMEM_PORT_RANGE`" + ` | Init, GetUniqueID | ` + "`LO-HI`" + ` or one port: every listener (rank 0's rendezvous, each PE's control and data listeners, in a gossip world each PE's gossip port (TCP and UDP) unless ` + "`SHMEM_GOSSIP_ADDR`" + ` names one, and with ` + "`SHMEM_RDMA_PROVIDER=fabric`" + ` the libfabric endpoint of IP providers: TCP for ` + "`tcp;ofi_rxm`" + ` and ` + "`sockets`" + `, UDP for ` + "`udp;ofi_rxd`" + `) binds a port of the range, so a firewall can open exactly those (verbs over InfiniBand and shm bind no IP port); a unique ID whose port is outside it is refused. Default: any port |
| ` + "`SHMEM_TRANSPORT`" + ` | Init | ` + "`tcp`" + ` (any case): the network path even between PEs on one host (shmemrun --network); any other value is an error |
| ` + "`SHMEM_BUSY_POLL`" + ` | Init | a Go duration in [0, 1s]: network reads poll their socket at most this long before parking; default ` + "`50us`" + `, as OpenSHMEM implementations poll. The poll halves while unanswered and rests entirely while the cores are oversubscribed; ` + "`0`" + ` parks at once (BENCHMARKS.md) |
| ` + "`SHMEM_CPUS_ALLOWED`" + ` | Init | CPU list (` + "`0-3,8`" + `) a PE bound to its share of CPUs moves all its threads onto once a network poll finds its core oversubscribed; set by shmemrun when it binds (` + "`--bind-to`" + `), unset otherwise |
| ` + "`SHMEM_RDMA_PROVIDER`" + ` | Init | data path to PEs on other hosts: ` + "`tcp`" + ` (default; TLS) or ` + "`fabric`" + ` (libfabric, RDMA NICs; build with ` + "`-tags goshmem_fabric`" + `; not encrypted, logged as a warning) |
| ` + "`SHMEM_FABRIC_PROVIDER`" + ` | Init | libfabric provider for ` + "`fabric`" + `: ` + "`verbs;ofi_rxm`" + `, ` + "`tcp;ofi_rxm`" + `, ` + "`sockets`" + `, …; default: the first offering RMA and atomics (verbs with an RDMA NIC) |
| ` + "`SHMEM_FABRIC_DOMAIN`" + ` | Init | libfabric domain (NIC or interface, e.g. ` + "`mlx5_0`" + `); default: the provider's first |
| ` + "`SHMEM_FABRIC_NODE`" + ` | Init | local address the fabric endpoint binds (tcp, sockets providers); default: the provider's choice |
| ` + "`SHMEM_HOST_ID`" + ` | Init | overrides the host identity (boot ID and hostname) that decides which PEs share memory |
| ` + "`SHMEM_GOSSIP_ADDR`" + ` | Init | host:port this PE gossips on with WithSeeds, TCP and UDP (a seed binds the address the others know; every member's port must be reachable from every other). Port 0 or unset: a port of ` + "`SHMEM_PORT_RANGE`" + ` if set, else any; host unset: the host of the control listener |
| ` + "`SHMEM_SIM_DELIVERY`" + ` | sim.Run, sim.Measure | ` + "`eager`" + ` (default) or ` + "`lazy`" + `: the delivery of every simulated world whose options do not set it |
| ` + "`SHMEM_SIM_SEED`" + ` | sim.Run, sim.Measure | the seed of every simulated world whose options do not set one (puts the world under the simulated network) |
| ` + "`SHMEM_HANG_REPORT`" + ` | Init | a Go duration: calls blocked that long log what they wait for; SIGQUIT prints the PE's report (see "Failures and mistakes") |
| ` + "`SHMEM_REQUIRE_LAUNCHER`" + ` | Init | ` + "`1`" + `/` + "`true`" + `/` + "`yes`" + `/` + "`on`" + `: Init without a launcher's environment fails instead of making a world of one PE |
`
