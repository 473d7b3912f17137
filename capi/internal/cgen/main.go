// Command cgen writes the typed routines of the C API (capi/typed_gen.c)
// and their declarations and C11 generic names (capi/include/shmem_gen.h).
// Which TYPENAMEs each family has comes from the specification's list,
// capi/testdata/spec15_c_api.txt, so the generated API is what the spec
// names. Every body is a call of a helper in capi/gs.h or capi/rt.c: the
// generated code only spells out the types. Run by go generate in capi/.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	// cgen [DIR [OUT]]: reads DIR/testdata, writes under OUT (default DIR).
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	out := dir
	if len(os.Args) > 2 {
		out = os.Args[2]
		if err := os.MkdirAll(filepath.Join(out, "include"), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	spec := readSpec(filepath.Join(dir, "testdata", "spec15_c_api.txt"))
	specNames = spec
	var h, c bytes.Buffer
	h.WriteString(header)
	c.WriteString(source)
	emitted := map[string]bool{}
	emit := func(name, proto, body string) {
		if !spec[name] || emitted[name] {
			return
		}
		emitted[name] = true
		fmt.Fprintf(&h, "%s;\n", proto)
		fmt.Fprintf(&c, "%s {\n%s\n}\n", proto, body)
	}
	for _, t := range types {
		h.WriteString("\n/* " + t.name + " */\n")
		typed(t, emit, &c)
	}
	h.WriteString("\n/* sized and untyped RMA */\n")
	sized(emit)
	generics(spec, emitted, &h)
	h.WriteString(footer)
	var missing []string
	for n := range spec {
		if !emitted[n] && !strings.Contains(n, "generic") {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "cgen: %d names of the list are written by hand (rt.c, api.c, aset.c): %s ...\n", len(missing), strings.Join(missing[:min(8, len(missing))], " "))
	}
	write(filepath.Join(out, "include", "shmem_gen.h"), h.Bytes())
	write(filepath.Join(out, "typed_gen.c"), c.Bytes())
}

// specNames is the spec's list, for families that emit helpers only for
// routines the spec has.
var specNames map[string]bool

func write(path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// readSpec returns the names of the spec's list, C functions and generic
// names alike; a generic name is recorded as "name generic" too.
func readSpec(path string) map[string]bool {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	m := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 2 {
			continue
		}
		if strings.HasPrefix(fs[1], "generic") {
			m[fs[0]+" generic"] = true
		} else {
			m[fs[0]] = true
		}
	}
	return m
}

// fill substitutes a template's placeholders.
func fill(s string, t ctype, name string) string {
	return strings.NewReplacer("{T}", t.name, "TYPE", t.c, "{TC}", t.tc, "{N}", `"`+name+`"`).Replace(s)
}

type emitFn func(name, proto, body string)

// pair emits a routine in its default-context and ctx forms: pattern has
// {ctx} where shmem_ctx_ goes; params and body use CTX for the context.
func pair(emit emitFn, t ctype, ret, pattern, params, body string) {
	for _, withCtx := range []bool{false, true} {
		name := strings.ReplaceAll(pattern, "{ctx}", "")
		p, ctx := params, "SHMEM_CTX_DEFAULT"
		if withCtx {
			name = strings.ReplaceAll(pattern, "{ctx}", "ctx_")
			p, ctx = "shmem_ctx_t ctx, "+params, "ctx"
		}
		name = strings.ReplaceAll(name, "{T}", t.name)
		b := strings.ReplaceAll(fill(body, t, name), "CTX", ctx)
		emit(name, fmt.Sprintf("%s %s(%s)", fill(ret, t, name), name, fill(p, t, name)), b)
	}
}
