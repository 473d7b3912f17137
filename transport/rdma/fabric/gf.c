//go:build cgo && goshmem_fabric

// gf.c holds every libfabric call of package fabric; Go calls these
// wrappers with indexes and plain values (see cfab.go).
#include "gf.h"

void gf_close(gf_node *n) {
	gf_ep_close(&n->main);
	if (n->heap_mr) fi_close(&n->heap_mr->fid);
	if (n->statics_mr) fi_close(&n->statics_mr->fid);
	if (n->bounce_mr) fi_close(&n->bounce_mr->fid);
	if (n->rwcntr) fi_close(&n->rwcntr->fid);
	if (n->cq) fi_close(&n->cq->fid);
	if (n->av) fi_close(&n->av->fid);
	if (n->domain) fi_close(&n->domain->fid);
	if (n->fabric) fi_close(&n->fabric->fid);
	if (n->info) fi_freeinfo(n->info);
	if (n->ep_info) fi_freeinfo(n->ep_info);
	free(n->bounce);
	free(n->ctx);
	memset(n, 0, sizeof *n);
}

// gf_close_ep closes the endpoint alone: once it returns libfabric
// touches none of the buffers of the operations still posted on it, and
// the rest (registrations the endpoint used, the domain) can go.
void gf_close_ep(gf_ep *e) {
	if (e->ep) fi_close(&e->ep->fid);
	e->ep = NULL;
}

// gf_ep_close closes an endpoint (if gf_close_ep has not) and its counters.
void gf_ep_close(gf_ep *e) {
	gf_close_ep(e);
	if (e->wcntr) fi_close(&e->wcntr->fid);
	if (e->rcntr) fi_close(&e->rcntr->fid);
	e->wcntr = e->rcntr = NULL;
}

// gf_ep_bind opens e's counters and endpoint on the node's domain and binds
// them with the node's address vector and completion queue. On failure the
// caller closes e (gf_ep_close) and n->step says which step failed.
static int gf_ep_bind(gf_node *n, gf_ep *e, struct fi_info *info) {
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };
	int rc;
#define GF_EP(what, call) do { n->step = what; if ((rc = (int)(call))) return rc; } while (0)
	GF_EP("fi_cntr_open(write)", fi_cntr_open(n->domain, &ca, &e->wcntr, NULL));
	GF_EP("fi_cntr_open(read)", fi_cntr_open(n->domain, &ca, &e->rcntr, NULL));
	GF_EP("fi_endpoint", fi_endpoint(n->domain, info, &e->ep, NULL));
	GF_EP("fi_ep_bind(av)", fi_ep_bind(e->ep, &n->av->fid, 0));
	GF_EP("fi_ep_bind(cq)", fi_ep_bind(e->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION));
	GF_EP("fi_ep_bind(write counter)", fi_ep_bind(e->ep, &e->wcntr->fid, FI_WRITE));
	GF_EP("fi_ep_bind(read counter)", fi_ep_bind(e->ep, &e->rcntr->fid, FI_READ));
#undef GF_EP
	n->step = NULL;
	return 0;
}

// gf_ep_open opens a further endpoint for a stream. It is not enabled by
// the node's gf_open, so it enables itself; on failure nothing stays open.
// It binds a port the kernel chooses (n->ep_info), never the node's own
// port, which the main endpoint holds.
int gf_ep_open(gf_node *n, gf_ep *e) {
	memset(e, 0, sizeof *e);
	int rc = gf_ep_bind(n, e, n->ep_info ? n->ep_info : n->info);
	if (rc == 0) {
		n->step = "fi_enable";
		rc = fi_enable(e->ep);
	}
	if (rc) gf_ep_close(e);
	else n->step = NULL;
	return rc;
}

// gf_pin narrows hints to the provider and domain n->info names, so that
// a further fi_getinfo for a variant of the node (a source port, remote
// write events) never changes which provider or NIC runs.
static void gf_pin(gf_node *n, struct fi_info *hints) {
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = strdup(n->info->fabric_attr->prov_name);
	free(hints->domain_attr->name);
	hints->domain_attr->name = n->info->domain_attr->name ? strdup(n->info->domain_attr->name) : NULL;
}

// gf_ip_port points at the port of an IP source address (a sockaddr_in or
// sockaddr_in6, in network order), or is NULL for the other formats
// (verbs over InfiniBand: FI_SOCKADDR_IB; shm: FI_ADDR_STR) and for an
// info without a source address.
static uint16_t *gf_ip_port(struct fi_info *info) {
	struct sockaddr *sa = info->src_addr;
	if (!sa) return NULL;
	switch (info->addr_format) {
	case FI_SOCKADDR: case FI_SOCKADDR_IN: case FI_SOCKADDR_IN6: break;
	default: return NULL;
	}
	if (sa->sa_family == AF_INET && info->src_addrlen >= sizeof(struct sockaddr_in))
		return &((struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6 && info->src_addrlen >= sizeof(struct sockaddr_in6))
		return &((struct sockaddr_in6 *)sa)->sin6_port;
	return NULL;
}

// gf_at_port moves the chosen n->info to the IP port service: fi_getinfo
// again, pinned to the same provider and domain, with FI_SOURCE and the
// same source host, which is node or, when the caller gave none, the one
// the provider chose (passing no node would leave the host to the
// provider again, and sockets and udp;ofi_rxd then bind 0.0.0.0 and name
// their endpoint so, an address no peer can reach). fi_endpoint (tcp,
// udp) or fi_enable (sockets) binds that port and fails with
// -FI_EADDRINUSE when it is taken. A provider whose source address is not
// an IP one binds no port a firewall sees: it keeps its info, and
// n->no_ip_port says that service was not used. host receives the source
// host for gf_rma_event.
static int gf_at_port(gf_node *n, struct fi_info *hints, const char *node, const char *service,
		char *host, size_t host_len) {
	if (!gf_ip_port(n->info)) {
		n->no_ip_port = 1;
		return 0;
	}
	if (node) {
		snprintf(host, host_len, "%s", node);
	} else {
		n->step = "getnameinfo(the provider's source address)";
		if (getnameinfo(n->info->src_addr, (socklen_t)n->info->src_addrlen, host, (socklen_t)host_len,
				NULL, 0, NI_NUMERICHOST))
			return -FI_EINVAL;
	}
	struct fi_info *at = NULL;
	gf_pin(n, hints);
	n->step = "fi_getinfo(source port)";
	int rc = fi_getinfo(FI_VERSION(1, 9), host, service, FI_SOURCE, hints, &at);
	if (rc) return rc;
	uint16_t *port = gf_ip_port(at);
	if (!port || !*port) {
		n->step = "fi_getinfo(source port): no IP source port in the provider's answer";
		fi_freeinfo(at);
		return -FI_EINVAL;
	}
	fi_freeinfo(n->info);
	n->info = at;
	n->step = NULL;
	return 0;
}

// gf_stream_info makes n->ep_info, the info stream endpoints open with
// when the node's binds a port (gf_at_port): the same with port 0, as
// another endpoint cannot bind the node's port, which its main endpoint
// holds.
static int gf_stream_info(gf_node *n) {
	n->step = "fi_dupinfo";
	n->ep_info = fi_dupinfo(n->info);
	if (!n->ep_info) return -FI_ENOMEM;
	uint16_t *port = gf_ip_port(n->ep_info);
	if (port) *port = 0;
	n->step = NULL;
	return 0;
}

// gf_rma_event switches n->info to the same provider and domain with
// FI_RMA_EVENT when they offer it: a counter then counts the remote writes
// and atomics into this node's heap, which lets waiters there be woken.
// It is asked for only after the choice is made, so wanting it never
// changes which provider or NIC runs (verbs has no such events; sockets
// and udp;ofi_rxd do). node and service are the source address the node
// was chosen with (gf_at_port), which the switch keeps.
static void gf_rma_event(gf_node *n, struct fi_info *hints, const char *node, const char *service) {
	struct fi_info *ev = NULL;
	gf_pin(n, hints);
	hints->caps |= FI_RMA_EVENT;
	if (fi_getinfo(FI_VERSION(1, 9), node, service, (node || service) ? FI_SOURCE : 0, hints, &ev) == 0 && ev) {
		fi_freeinfo(n->info);
		n->info = ev;
		n->rma_event = 1;
	}
}

// GF_TRY runs a step of gf_open; on failure it closes the node and keeps
// the step's name (gf_close clears the node) for the error message.
#define GF_TRY(what, call) do { n->step = what; int rc_ = (int)(call); \
	if (rc_) { const char *w_ = n->step; gf_close(n); n->step = w_; return rc_; } } while (0)

static int gf_cntr_width32(struct fid_domain *d);

int gf_open(gf_node *n, const char *prov, const char *dom, const char *node, const char *service,
		void *heap, size_t heap_len, void *statics, size_t statics_len, size_t bounce_size, int nctx) {
	memset(n, 0, sizeof *n);
	struct fi_info *hints = fi_allocinfo();
	if (!hints) { n->step = "fi_allocinfo"; return -FI_ENOMEM; }
	hints->caps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	hints->ep_attr->type = FI_EP_RDM;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	// Nothing is received as a message except what a provider emulates
	// (rxm's atomics): a small receive queue saves rxm from posting (and
	// touching) thousands of bounce buffers, which costs ~0.5 s per node.
	hints->rx_attr->size = 64;
	hints->tx_attr->size = 64;
	if (prov && *prov) hints->fabric_attr->prov_name = strdup(prov);
	if (dom && *dom) hints->domain_attr->name = strdup(dom);
	if (node && !*node) node = NULL;
	if (service && !*service) service = NULL;
	n->step = "fi_getinfo";
	int rc = fi_getinfo(FI_VERSION(1, 9), node, NULL, node ? FI_SOURCE : 0, hints, &n->info);
	if (rc) { fi_freeinfo(hints); n->info = NULL; gf_close(n); n->step = "fi_getinfo"; return rc; }
	char host[NI_MAXHOST];
	if (service) {
		rc = gf_at_port(n, hints, node, service, host, sizeof host);
		if (rc) { const char *what = n->step; fi_freeinfo(hints); gf_close(n); n->step = what; return rc; }
		if (!n->no_ip_port) node = host;
		else service = NULL;
	}
	gf_rma_event(n, hints, node, service);
	fi_freeinfo(hints);
	if (service) GF_TRY("fi_dupinfo", gf_stream_info(n));
	n->mr_local = (n->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
	n->virt_addr = (n->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;

	GF_TRY("fi_fabric", fi_fabric(n->info->fabric_attr, &n->fabric, NULL));
	GF_TRY("fi_domain", fi_domain(n->fabric, n->info, &n->domain, NULL));
	struct fi_av_attr av = { .type = FI_AV_TABLE };
	GF_TRY("fi_av_open", fi_av_open(n->domain, &av, &n->av, NULL));
	struct fi_cq_attr cq = { .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_UNSPEC, .size = (size_t)nctx * 2 };
	GF_TRY("fi_cq_open", fi_cq_open(n->domain, &cq, &n->cq, NULL));
	if ((n->cntr32 = gf_cntr_width32(n->domain))) n->cntr_polls = 1;
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };
	{
		const char *what = NULL;
		int rc_ = gf_ep_bind(n, &n->main, n->info);
		if (rc_) { what = n->step; gf_close(n); n->step = what; return rc_; }
	}
	if (n->rma_event) {
		GF_TRY("fi_cntr_open(remote write)", fi_cntr_open(n->domain, &ca, &n->rwcntr, NULL));
		GF_TRY("fi_ep_bind(remote write counter)", fi_ep_bind(n->main.ep, &n->rwcntr->fid, FI_REMOTE_WRITE));
	}
	GF_TRY("fi_enable", fi_enable(n->main.ep));
	if (heap_len > 0)
		GF_TRY("fi_mr_reg(heap)", fi_mr_reg(n->domain, heap, heap_len,
			FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, 0, 1, 0, &n->heap_mr, NULL));
	// The statics never grow, so one registration serves for the node's
	// life. Its requested key, 3, is no other registration's (growKeyBase
	// in grow.go lists them): a provider that takes requested keys refuses
	// a duplicate.
	if (statics_len > 0)
		GF_TRY("fi_mr_reg(statics)", fi_mr_reg(n->domain, statics, statics_len,
			FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, 0, 3, 0, &n->statics_mr, NULL));
	n->step = "allocating bounce buffers";
	if (posix_memalign((void **)&n->bounce, 4096, bounce_size * (size_t)nctx)) { n->bounce = NULL; gf_close(n); return -FI_ENOMEM; }
	memset(n->bounce, 0, bounce_size * (size_t)nctx);
	n->ctx = calloc((size_t)nctx, sizeof(gf_ctx));
	if (!n->ctx) { gf_close(n); return -FI_ENOMEM; }
	n->nctx = nctx;
	GF_TRY("fi_mr_reg(bounce)", fi_mr_reg(n->domain, n->bounce, bounce_size * (size_t)nctx,
		FI_READ | FI_WRITE, 0, 2, 0, &n->bounce_mr, NULL));
	n->bounce_desc = fi_mr_desc(n->bounce_mr);
	n->step = NULL;
	return 0;
}

uint64_t gf_heap_key(gf_node *n) { return n->heap_mr ? fi_mr_key(n->heap_mr) : 0; }
uint64_t gf_statics_key(gf_node *n) { return n->statics_mr ? fi_mr_key(n->statics_mr) : 0; }
const char *gf_prov(gf_node *n) { return n->info->fabric_attr->prov_name; }
size_t gf_inject_size(gf_node *n) { return n->info->tx_attr->inject_size; }
size_t gf_max_msg(gf_node *n) { return n->info->ep_attr->max_msg_size; }

int gf_getname(gf_node *n, void *buf, size_t *len) { return fi_getname(&n->main.ep->fid, buf, len); }

int gf_av_insert(gf_node *n, void *addr, fi_addr_t *out) {
	int rc = fi_av_insert(n->av, addr, 1, out, 0, NULL);
	return rc == 1 ? 0 : (rc < 0 ? rc : -FI_EINVAL);
}

void *gf_ctx_of(gf_node *n, int i) { return i < 0 ? NULL : &n->ctx[i]; }
void *gf_desc(gf_node *n, void *local_desc) { return local_desc ? local_desc : n->bounce_desc; }

ssize_t gf_write(gf_node *n, gf_ep *e, void *buf, size_t len, void *desc, fi_addr_t dst,
		uint64_t raddr, uint64_t key, int ctx, uint64_t flags) {
	struct iovec iov = { buf, len };
	struct fi_rma_iov rma = { raddr, len, key };
	struct fi_msg_rma m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dst,
		.rma_iov = &rma, .rma_iov_count = 1, .context = gf_ctx_of(n, ctx) };
	return fi_writemsg(e->ep, &m, flags);
}

ssize_t gf_read(gf_node *n, gf_ep *e, void *buf, size_t len, void *desc, fi_addr_t src,
		uint64_t raddr, uint64_t key, int ctx, uint64_t flags) {
	struct iovec iov = { buf, len };
	struct fi_rma_iov rma = { raddr, len, key };
	struct fi_msg_rma m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = src,
		.rma_iov = &rma, .rma_iov_count = 1, .context = gf_ctx_of(n, ctx) };
	return fi_readmsg(e->ep, &m, flags);
}

// gf_atomic_inject applies a non-fetching atomic; the operand is copied
// before it returns (FI_INJECT), so it may live on this stack frame.
ssize_t gf_atomic_inject(gf_ep *e, int op, int dt, uint64_t operand, fi_addr_t dst,
		uint64_t raddr, uint64_t key, uint64_t flags) {
	uint64_t v = operand;
	uint32_t v32 = (uint32_t)operand;
	void *buf = dt == FI_UINT32 ? (void *)&v32 : (void *)&v;
	struct fi_ioc ioc = { buf, 1 };
	struct fi_rma_ioc rma = { raddr, 1, key };
	void *desc = NULL;
	struct fi_msg_atomic m = { .msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = dst,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = dt, .op = op };
	return fi_atomicmsg(e->ep, &m, flags | FI_INJECT);
}

// gf_atomic_fetch runs a fetching (cmp == 0) or compare (cmp != 0) atomic
// with operand, compare value and result in slot ctx's bounce buffer at
// offsets 0, 8 and 16.
ssize_t gf_atomic_fetch(gf_node *n, gf_ep *e, int op, int dt, int cmp, fi_addr_t dst,
		uint64_t raddr, uint64_t key, int ctx, size_t bounce_size, uint64_t flags) {
	char *b = n->bounce + (size_t)ctx * bounce_size;
	void *desc = n->bounce_desc;
	struct fi_ioc op_ioc = { b, 1 }, cmp_ioc = { b + 8, 1 }, res_ioc = { b + 16, 1 };
	struct fi_rma_ioc rma = { raddr, 1, key };
	struct fi_msg_atomic m = { .msg_iov = &op_ioc, .desc = &desc, .iov_count = 1, .addr = dst,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = dt, .op = op, .context = gf_ctx_of(n, ctx) };
	if (cmp)
		return fi_compare_atomicmsg(e->ep, &m, &cmp_ioc, &desc, 1, &res_ioc, &desc, 1, flags);
	return fi_fetch_atomicmsg(e->ep, &m, &res_ioc, &desc, 1, flags);
}

// gf_atomic_ok reports whether the provider implements op on dt in the
// given flavour (0 plain, FI_FETCH_ATOMIC, FI_COMPARE_ATOMIC).
int gf_atomic_ok(gf_node *n, int op, int dt, uint64_t flavour) {
	struct fi_atomic_attr attr;
	return fi_query_atomic(n->domain, dt, op, &attr, flavour) == 0 && attr.count >= 1;
}

// gf_poll waits up to timeout_ms for completions and returns how many it
// stored (slot index and error code each; index -1 for an error without a
// slot), 0 on timeout or fi_cq_signal, or a negative error.
int gf_poll(gf_node *n, int timeout_ms, int *idx, int *err, int max) {
	struct fi_cq_entry e[64];
	if (max > 64) max = 64;
	ssize_t rc = timeout_ms > 0 ? fi_cq_sread(n->cq, e, max, NULL, timeout_ms) : fi_cq_read(n->cq, e, max);
	if (rc > 0) {
		for (ssize_t i = 0; i < rc; i++) {
			idx[i] = e[i].op_context ? (int)((gf_ctx *)e[i].op_context - n->ctx) : -1;
			err[i] = 0;
		}
		return (int)rc;
	}
	if (rc == -FI_EAVAIL) {
		struct fi_cq_err_entry ee;
		memset(&ee, 0, sizeof ee);
		if (fi_cq_readerr(n->cq, &ee, 0) != 1) return 0;
		idx[0] = ee.op_context ? (int)((gf_ctx *)ee.op_context - n->ctx) : -1;
		err[0] = ee.err ? ee.err : FI_EIO;
		return 1;
	}
	if (rc == -FI_EAGAIN || rc == -FI_ECANCELED || rc == -FI_ETIMEDOUT || rc == -FI_EINTR) return 0;
	return (int)rc;
}

void gf_wake(gf_node *n) { fi_cq_signal(n->cq); }

static uint64_t gf_now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// Naps of gf_cntr_poll: from GF_NAP_MIN, doubling, to GF_NAP_MAX, which
// bounds how late a poll sees the counter reach its threshold (the world
// polls memory as often on providers whose writes do not wake it).
#define GF_NAP_MIN 20000u   // ns
#define GF_NAP_MAX 1000000u // ns

// gf_cntr_reached reports whether count, a counter's reading, has reached
// threshold, modulo 2^32: right for a provider whose counters are 32 bits
// wide (gf_node.cntr32), sign-extended or not, and for one whose counters
// are 64, as long as fewer than 2^31 operations of an endpoint are
// outstanding (its slots and queues hold far fewer). counts.go's reached
// is the same comparison.
int gf_cntr_reached(uint64_t count, uint64_t threshold) {
	return (int32_t)((uint32_t)count - (uint32_t)threshold) >= 0;
}

// gf_cntr_width32 reports whether the domain's counters keep 32 bits: a
// scratch counter set to 2^32 reads otherwise. A provider that cannot set
// a counter is taken for a 64-bit one.
static int gf_cntr_width32(struct fid_domain *d) {
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_UNSPEC };
	struct fid_cntr *c;
	if (fi_cntr_open(d, &ca, &c, NULL)) return 0;
	int narrow = fi_cntr_set(c, (uint64_t)1 << 32) == 0 && fi_cntr_read(c) != (uint64_t)1 << 32;
	fi_close(&c->fid);
	return narrow;
}

// gf_cntr_set sets counter which (0 e's write, 1 e's read) to value: for
// tests that take an endpoint's counts to where they wrap.
int gf_cntr_set(gf_ep *e, int which, uint64_t value) {
	return fi_cntr_set(which ? e->rcntr : e->wcntr, value);
}

// gf_cntr_poll is fi_cntr_wait made of reads and naps, until end (a
// gf_now_ns time): 0 at threshold, -FI_EAVAIL once the error count
// differs from bad0, else -FI_ETIMEDOUT.
static int gf_cntr_poll(struct fid_cntr *c, uint64_t threshold, uint64_t bad0, uint64_t end) {
	uint64_t nap = GF_NAP_MIN;
	for (;;) {
		if (gf_cntr_reached(fi_cntr_read(c), threshold)) return 0;
		if (fi_cntr_readerr(c) != bad0) return -FI_EAVAIL;
		uint64_t now = gf_now_ns();
		if (now >= end) return -FI_ETIMEDOUT;
		uint64_t d = end - now < nap ? end - now : nap;
		struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };
		nanosleep(&ts, NULL);
		if (nap < GF_NAP_MAX) nap = nap * 2 < GF_NAP_MAX ? nap * 2 : GF_NAP_MAX;
	}
}

// gf_cntr_wait waits up to timeout_ms for counter (0 e's write, 1 e's
// read, 2 the node's remote write) to reach threshold and returns its
// success and error counts (by value: a pointer argument would make every
// Go caller allocate). A timeout of -1 only reads, which also drives a
// manual-progress provider one step.
//
// A wait must sleep: the sockets provider's fi_cntr_wait in libfabric
// 1.10 to 1.21 does not. It sleeps on a condition variable until a
// CLOCK_MONOTONIC time taken as a CLOCK_REALTIME one, which has passed,
// so it returns at once (fixed upstream in 1.22), and its callers here
// loop: each waiting thread, and the remote-write watcher all the time,
// spins a CPU in futex calls, which starves the PEs of a small host. Once
// a wait returns early, neither at its threshold nor with a new error,
// this node's waits poll instead (gf_cntr_poll) for the rest of its life.
gf_counts gf_cntr_wait(gf_node *n, gf_ep *e, int which, uint64_t threshold, int timeout_ms) {
	struct fid_cntr *c = which == 2 ? n->rwcntr : which ? e->rcntr : e->wcntr;
	gf_counts r = { 0, 0, 0 };
	if (timeout_ms >= 0) {
		uint64_t bad0 = fi_cntr_readerr(c);
		uint64_t start = gf_now_ns(), end = start + (uint64_t)timeout_ms * 1000000u;
		int poll = __atomic_load_n(&n->cntr_polls, __ATOMIC_RELAXED);
		if (!poll) {
			r.rc = fi_cntr_wait(c, threshold, timeout_ms);
			// Early: before half the timeout (libfabric counts whole
			// milliseconds), short of the threshold, no new error.
			poll = r.rc != 0 && r.rc != -FI_EAVAIL && timeout_ms >= 2 && (gf_now_ns() - start) * 2 < end - start &&
				!gf_cntr_reached(fi_cntr_read(c), threshold) && fi_cntr_readerr(c) == bad0;
			if (poll) __atomic_store_n(&n->cntr_polls, 1, __ATOMIC_RELAXED);
		}
		if (poll) r.rc = gf_cntr_poll(c, threshold, bad0, end);
	}
	r.ok = fi_cntr_read(c);
	r.bad = fi_cntr_readerr(c);
	return r;
}

// gf_mr_reg_heap registers the heap's first len bytes again, once it has
// grown: a new registration for the whole range rather than for the new
// part alone, so that no transfer ever spans two registrations and each
// peer needs one key. key is the requested key (ignored under
// FI_MR_PROV_KEY); the remote key is stored in *rkey.
int gf_mr_reg_heap(gf_node *n, void *heap, size_t len, uint64_t key, struct fid_mr **mr, uint64_t *rkey) {
	int rc = fi_mr_reg(n->domain, heap, len, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, 0, key, 0, mr, NULL);
	if (rc == 0) *rkey = fi_mr_key(*mr);
	return rc;
}

int gf_mr_reg_local(gf_node *n, void *buf, size_t len, uint64_t access, uint64_t key, struct fid_mr **mr, void **desc) {
	int rc = fi_mr_reg(n->domain, buf, len, access, 0, key, 0, mr, NULL);
	if (rc == 0) *desc = fi_mr_desc(*mr);
	return rc;
}
void gf_mr_close(struct fid_mr *mr) { if (mr) fi_close(&mr->fid); }
