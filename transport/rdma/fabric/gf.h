// gf.h: the C side of package fabric (see gf.c).
#ifndef GOSHMEM_GF_H
#define GOSHMEM_GF_H
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netdb.h>

typedef struct gf_ctx { struct fi_context2 fi; } gf_ctx;

// gf_ep is one endpoint with its own write and read counters: the node's,
// and one per stream (an OpenSHMEM context), so that each counts only its
// own operations. Every endpoint shares the node's domain, address
// vector, completion queue and registrations.
typedef struct gf_ep {
	struct fid_ep *ep;
	struct fid_cntr *wcntr, *rcntr;
} gf_ep;

typedef struct gf_node {
	struct fi_info *info;
	struct fi_info *ep_info; // for stream endpoints when info binds a port (gf_at_port), or NULL
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	gf_ep main;
	struct fid_cntr *rwcntr; // remote writes into the heap (FI_RMA_EVENT), or NULL
	struct fid_mr *heap_mr, *bounce_mr;
	struct fid_mr *statics_mr; // the statics region (Config.Statics), or NULL
	void *bounce_desc;
	char *bounce;
	gf_ctx *ctx;
	int nctx;
	int mr_local, virt_addr, rma_event;
	int no_ip_port; // a port was asked for, but the provider's address is not an IP one
	// cntr_polls is set (atomically: every waiter may) once fi_cntr_wait
	// returned early, neither at its threshold nor with an error, as
	// sockets' does in libfabric 1.10 to 1.21: counter waits then poll
	// (gf_cntr_wait).
	int cntr_polls;
	// cntr32 is set when the provider keeps its counters in 32 bits (the
	// sockets provider: an int32, which fi_cntr_read sign-extends, so
	// 2^31 reads 0xffffffff80000000 and 2^32 reads 0). Every comparison
	// of counts is made modulo 2^32 (GF_REACHED, counts.go), and such a
	// node polls its counters from the start: the provider's own wait
	// compares its 32-bit count with a 64-bit threshold.
	int cntr32;
	const char *step; // what failed, for the error message
} gf_node;

typedef struct gf_counts { uint64_t ok, bad; int rc; } gf_counts;


void gf_close(gf_node *n);
void gf_close_ep(gf_ep *e);
int gf_ep_open(gf_node *n, gf_ep *e);
void gf_ep_close(gf_ep *e);
int gf_open(gf_node *n, const char *prov, const char *dom, const char *node, const char *service, void *heap, size_t heap_len, void *statics, size_t statics_len, size_t bounce_size, int nctx);
uint64_t gf_heap_key(gf_node *n);
uint64_t gf_statics_key(gf_node *n);
const char *gf_prov(gf_node *n);
size_t gf_inject_size(gf_node *n);
size_t gf_max_msg(gf_node *n);
int gf_getname(gf_node *n, void *buf, size_t *len);
int gf_av_insert(gf_node *n, void *addr, fi_addr_t *out);
void *gf_ctx_of(gf_node *n, int i);
void *gf_desc(gf_node *n, void *local_desc);
ssize_t gf_write(gf_node *n, gf_ep *e, void *buf, size_t len, void *desc, fi_addr_t dst, uint64_t raddr, uint64_t key, int ctx, uint64_t flags);
ssize_t gf_read(gf_node *n, gf_ep *e, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t raddr, uint64_t key, int ctx, uint64_t flags);
ssize_t gf_atomic_inject(gf_ep *e, int op, int dt, uint64_t operand, fi_addr_t dst, uint64_t raddr, uint64_t key, uint64_t flags);
ssize_t gf_atomic_fetch(gf_node *n, gf_ep *e, int op, int dt, int cmp, fi_addr_t dst, uint64_t raddr, uint64_t key, int ctx, size_t bounce_size, uint64_t flags);
int gf_atomic_ok(gf_node *n, int op, int dt, uint64_t flavour);
int gf_poll(gf_node *n, int timeout_ms, int *idx, int *err, int max);
void gf_wake(gf_node *n);
gf_counts gf_cntr_wait(gf_node *n, gf_ep *e, int which, uint64_t threshold, int timeout_ms);
int gf_cntr_reached(uint64_t count, uint64_t threshold);
int gf_cntr_set(gf_ep *e, int which, uint64_t value);
int gf_mr_reg_heap(gf_node *n, void *heap, size_t len, uint64_t key, struct fid_mr **mr, uint64_t *rkey);
int gf_mr_reg_local(gf_node *n, void *buf, size_t len, uint64_t access, uint64_t key, struct fid_mr **mr, void **desc);
void gf_mr_close(struct fid_mr *mr);
#endif
