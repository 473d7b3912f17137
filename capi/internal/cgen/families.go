package main

import (
	"bytes"
	"fmt"
	"strings"
)

const rmaBytes = "nelems * sizeof(TYPE)"

// typed emits every family's routines for one TYPENAME.
func typed(t ctype, emit emitFn, c *bytes.Buffer) {
	// RMA
	pair(emit, t, "void", "shmem_{ctx}{T}_put", "TYPE *dest, const TYPE *source, size_t nelems, int pe",
		"  gs_put(CTX, {N}, dest, source, "+rmaBytes+", pe, 0);")
	pair(emit, t, "void", "shmem_{ctx}{T}_put_nbi", "TYPE *dest, const TYPE *source, size_t nelems, int pe",
		"  gs_put(CTX, {N}, dest, source, "+rmaBytes+", pe, 1);")
	pair(emit, t, "void", "shmem_{ctx}{T}_get", "TYPE *dest, const TYPE *source, size_t nelems, int pe",
		"  gs_get(CTX, {N}, dest, source, "+rmaBytes+", pe, 0);")
	pair(emit, t, "void", "shmem_{ctx}{T}_get_nbi", "TYPE *dest, const TYPE *source, size_t nelems, int pe",
		"  gs_get(CTX, {N}, dest, source, "+rmaBytes+", pe, 1);")
	pair(emit, t, "void", "shmem_{ctx}{T}_p", "TYPE *dest, TYPE value, int pe",
		"  gs_put(CTX, {N}, dest, &value, sizeof(TYPE), pe, 0);")
	pair(emit, t, "TYPE", "shmem_{ctx}{T}_g", "const TYPE *source, int pe",
		"  TYPE v;\n  gs_get(CTX, {N}, &v, source, sizeof(TYPE), pe, 0);\n  return v;")
	pair(emit, t, "void", "shmem_{ctx}{T}_iput", "TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe",
		"  gs_strided(CTX, {N}, 1, dest, source, sizeof(TYPE), dst, sst, nelems, pe);")
	pair(emit, t, "void", "shmem_{ctx}{T}_iget", "TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe",
		"  gs_strided(CTX, {N}, 0, dest, source, sizeof(TYPE), dst, sst, nelems, pe);")
	for _, nbi := range []string{"", "_nbi"} {
		flag := map[string]string{"": "0", "_nbi": "1"}[nbi]
		pair(emit, t, "void", "shmem_{ctx}{T}_put_signal"+nbi, "TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe",
			"  gs_put_signal(CTX, {N}, dest, source, "+rmaBytes+", sig_addr, signal, sig_op, pe, "+flag+");")
	}
	if t.kind != 'c' && t.name != "longdouble" {
		atomics(t, emit, c)
		waits(t, emit)
	}
	reductions(t, emit, c)
	collectives(t, emit)
}

// amo describes one atomic: its fast path on a mapped word r (a TYPE *),
// and the Go-side operation code for the fallback.
type amo struct {
	op, ret, params, fast, code, value, cond string
}

var amos = []amo{
	{"fetch", "TYPE", "const TYPE *source, int pe", "TYPE v; __atomic_load(r, &v, __ATOMIC_SEQ_CST); return v;", "GS_AMO_FETCH", "0", "0"},
	{"set", "void", "TYPE *dest, TYPE value, int pe", "__atomic_store(r, &value, __ATOMIC_SEQ_CST); return;", "GS_AMO_SET", "value", "0"},
	{"swap", "TYPE", "TYPE *dest, TYPE value, int pe", "TYPE old; __atomic_exchange(r, &value, &old, __ATOMIC_SEQ_CST); return old;", "GS_AMO_SWAP", "value", "0"},
	{"compare_swap", "TYPE", "TYPE *dest, TYPE cond, TYPE value, int pe", "__atomic_compare_exchange(r, &cond, &value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return cond;", "GS_AMO_CSWAP", "value", "cond"},
	{"fetch_inc", "TYPE", "TYPE *dest, int pe", "return __atomic_fetch_add(r, 1, __ATOMIC_SEQ_CST);", "GS_AMO_FADD", "1", "0"},
	{"inc", "void", "TYPE *dest, int pe", "__atomic_fetch_add(r, 1, __ATOMIC_SEQ_CST); return;", "GS_AMO_ADD", "1", "0"},
	{"fetch_add", "TYPE", "TYPE *dest, TYPE value, int pe", "return __atomic_fetch_add(r, value, __ATOMIC_SEQ_CST);", "GS_AMO_FADD", "value", "0"},
	{"add", "void", "TYPE *dest, TYPE value, int pe", "__atomic_fetch_add(r, value, __ATOMIC_SEQ_CST); return;", "GS_AMO_ADD", "value", "0"},
	{"fetch_and", "TYPE", "TYPE *dest, TYPE value, int pe", "return __atomic_fetch_and(r, value, __ATOMIC_SEQ_CST);", "GS_AMO_FAND", "value", "0"},
	{"and", "void", "TYPE *dest, TYPE value, int pe", "__atomic_fetch_and(r, value, __ATOMIC_SEQ_CST); return;", "GS_AMO_AND", "value", "0"},
	{"fetch_or", "TYPE", "TYPE *dest, TYPE value, int pe", "return __atomic_fetch_or(r, value, __ATOMIC_SEQ_CST);", "GS_AMO_FOR", "value", "0"},
	{"or", "void", "TYPE *dest, TYPE value, int pe", "__atomic_fetch_or(r, value, __ATOMIC_SEQ_CST); return;", "GS_AMO_OR", "value", "0"},
	{"fetch_xor", "TYPE", "TYPE *dest, TYPE value, int pe", "return __atomic_fetch_xor(r, value, __ATOMIC_SEQ_CST);", "GS_AMO_FXOR", "value", "0"},
	{"xor", "void", "TYPE *dest, TYPE value, int pe", "__atomic_fetch_xor(r, value, __ATOMIC_SEQ_CST); return;", "GS_AMO_XOR", "value", "0"},
}

// deprecated names of the atomics (OpenSHMEM 1.3), by the 1.4 name they became.
var amoOld = map[string]string{"fetch_add": "fadd", "fetch_inc": "finc", "add": "add", "inc": "inc",
	"compare_swap": "cswap", "swap": "swap", "fetch": "fetch", "set": "set"}

func atomics(t ctype, emit emitFn, c *bytes.Buffer) {
	fmt.Fprintf(c, "\nstatic inline uint64_t gs_bits_%s(%s v) { uint64_t b = 0; memcpy(&b, &v, sizeof v); return b; }\n", t.name, t.c)
	fmt.Fprintf(c, "static inline %s gs_from_bits_%s(uint64_t b) { %s v; memcpy(&v, &b, sizeof v); return v; }\n", t.c, t.name, t.c)
	for _, a := range amos {
		addr := "dest"
		if a.op == "fetch" {
			addr = "source"
		}
		conv := fmt.Sprintf("gs_amo(CTX, {N}, %s, sizeof(TYPE), %s, gs_bits_{T}(%s), gs_bits_{T}(%s), pe)", a.code, addr, castVal(a.value), castVal(a.cond))
		slow := "  " + conv + ";"
		if a.ret != "void" {
			slow = "  return gs_from_bits_{T}(" + conv + ");"
		}
		body := fmt.Sprintf("  pe = gs_pe(CTX, pe);\n  TYPE *r = (TYPE *)gs_at_amo(%s, sizeof(TYPE), pe);\n  if (r) { %s }\n%s", addr, a.fast, slow)
		if t.kind == 'f' && a.op != "fetch" && a.op != "set" && a.op != "swap" {
			continue
		}
		pair(emit, t, a.ret, "shmem_{ctx}{T}_atomic_"+a.op, a.params, body)
		if old, ok := amoOld[a.op]; ok {
			name := "shmem_" + t.name + "_" + old
			emit(name, fill(a.ret+" "+name+"("+a.params+")", t, name), strings.ReplaceAll(fill(body, t, name), "CTX", "SHMEM_CTX_DEFAULT"))
		}
		// The fetching atomics' non-blocking forms: on a mapped word the
		// blocking form, which completes at once; else posted, the old
		// value landing in *fetch by the next quiet (gs_amo_nbi).
		if a.ret != "void" {
			params := "TYPE *fetch, " + a.params
			call := fmt.Sprintf("shmem_ctx_%s_atomic_%s(CTX, %s)", t.name, a.op, argNames(a.params))
			post := fmt.Sprintf("gs_amo_nbi(CTX, {N}, %s, sizeof(TYPE), %s, gs_bits_{T}(%s), gs_bits_{T}(%s), wpe, fetch)", a.code, addr, castVal(a.value), castVal(a.cond))
			body := fmt.Sprintf("  int wpe = gs_pe(CTX, pe);\n  if (gs_at_amo(%s, sizeof(TYPE), wpe)) {\n    *fetch = %s;\n    return;\n  }\n  %s;", addr, call, post)
			pair(emit, t, "void", "shmem_{ctx}{T}_atomic_"+a.op+"_nbi", params, body)
		}
	}
}

// castVal makes a literal operand a TYPE for gs_bits.
func castVal(v string) string {
	if v == "0" || v == "1" {
		return "(TYPE)" + v
	}
	return v
}

// argNames turns "TYPE *dest, TYPE value, int pe" into "dest, value, pe".
func argNames(params string) string {
	var out []string
	for _, p := range strings.Split(params, ",") {
		f := strings.Fields(strings.ReplaceAll(p, "*", " "))
		out = append(out, f[len(f)-1])
	}
	return strings.Join(out, ", ")
}

func waits(t ctype, emit emitFn) {
	type w struct{ op, ret, params, args string }
	for _, x := range []w{
		{"wait_until", "void", "TYPE *ivar, int cmp, TYPE cmp_value", "ivar, 1, NULL, NULL, cmp, &cmp_value, 0, GS_WAIT_ALL, 1"},
		{"wait_until_all", "void", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE cmp_value", "ivars, nelems, status, NULL, cmp, &cmp_value, 0, GS_WAIT_ALL, 1"},
		{"wait_until_any", "size_t", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE cmp_value", "ivars, nelems, status, NULL, cmp, &cmp_value, 0, GS_WAIT_ANY, 1"},
		{"wait_until_some", "size_t", "TYPE *ivars, size_t nelems, size_t *indices, const int *status, int cmp, TYPE cmp_value", "ivars, nelems, status, indices, cmp, &cmp_value, 0, GS_WAIT_SOME, 1"},
		{"wait_until_all_vector", "void", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE *cmp_values", "ivars, nelems, status, NULL, cmp, cmp_values, 1, GS_WAIT_ALL, 1"},
		{"wait_until_any_vector", "size_t", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE *cmp_values", "ivars, nelems, status, NULL, cmp, cmp_values, 1, GS_WAIT_ANY, 1"},
		{"wait_until_some_vector", "size_t", "TYPE *ivars, size_t nelems, size_t *indices, const int *status, int cmp, TYPE *cmp_values", "ivars, nelems, status, indices, cmp, cmp_values, 1, GS_WAIT_SOME, 1"},
		{"test", "int", "TYPE *ivar, int cmp, TYPE cmp_value", "ivar, 1, NULL, NULL, cmp, &cmp_value, 0, GS_WAIT_ALL, 0"},
		{"test_all", "int", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE cmp_value", "ivars, nelems, status, NULL, cmp, &cmp_value, 0, GS_WAIT_ALL, 0"},
		{"test_any", "size_t", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE cmp_value", "ivars, nelems, status, NULL, cmp, &cmp_value, 0, GS_WAIT_ANY, 0"},
		{"test_some", "size_t", "TYPE *ivars, size_t nelems, size_t *indices, const int *status, int cmp, TYPE cmp_value", "ivars, nelems, status, indices, cmp, &cmp_value, 0, GS_WAIT_SOME, 0"},
		{"test_all_vector", "int", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE *cmp_values", "ivars, nelems, status, NULL, cmp, cmp_values, 1, GS_WAIT_ALL, 0"},
		{"test_any_vector", "size_t", "TYPE *ivars, size_t nelems, const int *status, int cmp, TYPE *cmp_values", "ivars, nelems, status, NULL, cmp, cmp_values, 1, GS_WAIT_ANY, 0"},
		{"test_some_vector", "size_t", "TYPE *ivars, size_t nelems, size_t *indices, const int *status, int cmp, TYPE *cmp_values", "ivars, nelems, status, indices, cmp, cmp_values, 1, GS_WAIT_SOME, 0"},
		{"wait", "void", "TYPE *ivar, TYPE cmp_value", "ivar, 1, NULL, NULL, SHMEM_CMP_NE, &cmp_value, 0, GS_WAIT_ALL, 1"},
	} {
		name := "shmem_" + t.name + "_" + x.op
		call := "gs_wait({N}, {TC}, sizeof(TYPE), " + x.args + ")"
		body := "  " + call + ";"
		if x.ret != "void" {
			body = "  return (" + x.ret + ")" + call + ";"
		}
		emit(name, fill(x.ret+" "+name+"("+x.params+")", t, name), fill(body, t, name))
	}
}

var reduceOps = []string{"and", "or", "xor", "max", "min", "sum", "prod"}

// combine returns the C that folds x into acc for one element i.
func combine(t ctype, op string) string {
	switch op {
	case "and":
		return "a[i] &= b[i];"
	case "or":
		return "a[i] |= b[i];"
	case "xor":
		return "a[i] ^= b[i];"
	case "max", "min":
		// A NaN fails every comparison: floats take it over any number,
		// so that any NaN gives NaN as Reduce's do. The fold runs in
		// member order on every PE, so every PE gets the same bits.
		cmp := map[string]string{"max": ">", "min": "<"}[op]
		if t.kind == 'f' {
			return "if (b[i] " + cmp + " a[i] || b[i] != b[i]) a[i] = b[i];"
		}
		return "if (b[i] " + cmp + " a[i]) a[i] = b[i];"
	case "sum":
		return "a[i] += b[i];"
	}
	return "a[i] *= b[i];"
}

func reductions(t ctype, emit emitFn, c *bytes.Buffer) {
	for _, op := range reduceOps {
		team := "shmem_" + t.name + "_" + op + "_reduce"
		aset := "shmem_" + t.name + "_" + op + "_to_all"
		comb := "gs_comb_" + t.name + "_" + op
		if !specNames[team] && !specNames[aset] {
			continue
		}
		fmt.Fprintf(c, "\nstatic void %s(void *acc, const void *x, size_t n) {\n  %s *a = acc; const %s *b = x;\n  for (size_t i = 0; i < n; i++) { %s }\n}\n",
			comb, t.c, t.c, combine(t, op))
		body := fmt.Sprintf("  return gs_reduce_c(%q, team, dest, source, nreduce, sizeof(TYPE), %s);", team, comb)
		if t.tc != "" {
			body = fmt.Sprintf("  return gs_reduce(%q, team, %s, GS_OP_%s, dest, source, nreduce);", team, t.tc, strings.ToUpper(op))
		}
		emit(team, fill("int "+team+"(shmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce)", t, team), fill(body, t, team))
		emit(aset, fill("void "+aset+"(TYPE *dest, const TYPE *source, int nreduce, int PE_start, int logPE_stride, int PE_size, TYPE *pWrk, long *pSync)", t, aset),
			fmt.Sprintf("  (void)pWrk; (void)pSync;\n  gs_to_all(%q, dest, source, nreduce, sizeof(%s), PE_start, logPE_stride, PE_size, %s);", aset, t.c, comb))
	}
}

func collectives(t ctype, emit emitFn) {
	for _, x := range []struct{ op, params, body string }{
		{"broadcast", "shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems, int PE_root", "  return gs_coll({N}, GS_BCAST, team, dest, source, " + rmaBytes + ", PE_root);"},
		{"collect", "shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems", "  return gs_coll({N}, GS_COLLECT, team, dest, source, " + rmaBytes + ", 0);"},
		{"fcollect", "shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems", "  return gs_coll({N}, GS_FCOLLECT, team, dest, source, " + rmaBytes + ", 0);"},
		{"alltoall", "shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems", "  return gs_coll({N}, GS_ALLTOALL, team, dest, source, " + rmaBytes + ", 0);"},
		{"alltoalls", "shmem_team_t team, TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems", "  return gs_alltoalls({N}, team, dest, source, dst, sst, nelems, sizeof(TYPE));"},
	} {
		name := "shmem_" + t.name + "_" + x.op
		emit(name, fill("int "+name+"("+x.params+")", t, name), fill(x.body, t, name))
	}
}

// sized emits put8..put128, putmem and their kin: TYPE is void and the
// element size comes from the name.
func sized(emit emitFn) {
	for _, s := range []struct{ name, bytes string }{{"8", "1"}, {"16", "2"}, {"32", "4"}, {"64", "8"}, {"128", "16"}, {"mem", "1"}} {
		t := ctype{name: s.name, c: "void"}
		n := "nelems * " + s.bytes
		for _, nbi := range []string{"", "_nbi"} {
			flag := map[string]string{"": "0", "_nbi": "1"}[nbi]
			pair(emit, t, "void", "shmem_{ctx}put{T}"+nbi, "void *dest, const void *source, size_t nelems, int pe",
				"  gs_put(CTX, {N}, dest, source, "+n+", pe, "+flag+");")
			pair(emit, t, "void", "shmem_{ctx}get{T}"+nbi, "void *dest, const void *source, size_t nelems, int pe",
				"  gs_get(CTX, {N}, dest, source, "+n+", pe, "+flag+");")
			pair(emit, t, "void", "shmem_{ctx}put{T}_signal"+nbi, "void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe",
				"  gs_put_signal(CTX, {N}, dest, source, "+n+", sig_addr, signal, sig_op, pe, "+flag+");")
		}
		pair(emit, t, "void", "shmem_{ctx}iput{T}", "void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe",
			"  gs_strided(CTX, {N}, 1, dest, source, "+s.bytes+", dst, sst, nelems, pe);")
		pair(emit, t, "void", "shmem_{ctx}iget{T}", "void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe",
			"  gs_strided(CTX, {N}, 0, dest, source, "+s.bytes+", dst, sst, nelems, pe);")
	}
}
