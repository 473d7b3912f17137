package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// teamFirst are the generic names whose first argument is a team: they
// dispatch on the second.
var teamFirst = map[string]bool{"broadcast": true, "collect": true, "fcollect": true, "alltoall": true, "alltoalls": true}

// constFirst are the generic names whose dispatching pointer is const in
// the spec: callers pass both const and plain pointers.
var constFirst = map[string]bool{"g": true, "atomic_fetch": true, "fetch": true}

// generics writes a C11 _Generic macro for every generic name of the spec
// that has typed routines. A macro with a context form picks it when the
// first argument is a shmem_ctx_t.
func generics(spec, emitted map[string]bool, h *bytes.Buffer) {
	var names []string
	for n := range spec {
		if strings.HasSuffix(n, " generic") {
			names = append(names, strings.TrimSuffix(n, " generic"))
		}
	}
	sort.Strings(names)
	h.WriteString("\n/* C11 generic names */\n#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(GOSHMEM_NO_GENERIC)\n")
	for _, n := range names {
		base := strings.TrimPrefix(n, "shmem_")
		cases := func(pattern string) string {
			var b strings.Builder
			for _, t := range types {
				if t.same != "" {
					continue
				}
				c, fn, ok := genericCase(pattern, t, emitted)
				if !ok {
					continue
				}
				fmt.Fprintf(&b, " %s *: %s,", c, fn)
				if constFirst[base] {
					fmt.Fprintf(&b, " const %s *: %s,", c, fn)
				}
			}
			return b.String()
		}
		plain := cases("shmem_{T}_" + base)
		if plain == "" {
			continue // shmem_sync, shmem_global_exit: written by hand
		}
		arg := "GS_ARG1"
		if teamFirst[base] || strings.HasSuffix(base, "_reduce") {
			arg = "GS_ARG2"
		}
		ctx := cases("shmem_ctx_{T}_" + base)
		if ctx == "" {
			fmt.Fprintf(h, "#define %s(...) _Generic(%s(__VA_ARGS__),%s default: gs_no_such_type)(__VA_ARGS__)\n", n, arg, plain)
			continue
		}
		fmt.Fprintf(h, "#define %s(...) _Generic(GS_ARG1(__VA_ARGS__), shmem_ctx_t: _Generic(GS_ARG2(__VA_ARGS__),%s default: gs_no_such_type),%s default: gs_no_such_type)(__VA_ARGS__)\n", n, ctx, plain)
	}
	h.WriteString("#endif\n")
}

// genericCase returns the C type and routine a _Generic lists for the
// standard type t and the routine name pattern: t's own routine, or else
// that of the first fixed-width type that is t (see ctype.same), or
// false when neither exists.
func genericCase(pattern string, t ctype, emitted map[string]bool) (c, fn string, ok bool) {
	if fn := strings.ReplaceAll(pattern, "{T}", t.name); emitted[fn] {
		return t.c, fn, true
	}
	for _, a := range types {
		if fn := strings.ReplaceAll(pattern, "{T}", a.name); a.same == t.name && emitted[fn] {
			return a.c, fn, true
		}
	}
	return "", "", false
}
