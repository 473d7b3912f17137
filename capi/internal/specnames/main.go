// Command specnames lists the C routines that the OpenSHMEM specification's
// index names, with every TYPENAME and SIZE expanded, for the header test
// (capi/header_test.go). It reads the specification's LaTeX sources:
//
//	git -C specification archive v1.5 content | tar -x -C /tmp/spec
//	go run ./capi/internal/specnames /tmp/spec/content > capi/testdata/spec15_c_api.txt
//
// Output lines are "name kind" where kind is "c" (a C function), "generic"
// (a C11 _Generic name) or either with "-deprecated"; a name that is both
// has a line for each. The list is checked in so tests do not need the
// specification.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	funcDecl  = regexp.MustCompile(`FuncDecl\{(.*?)\}@`)
	tableRef  = regexp.MustCompile(`Table~?\s*\\ref\{(\w+)\}`)
	ctypeList = regexp.MustCompile(`\\CTYPE\{([^}]*)\}`)
	sizeList  = regexp.MustCompile(`SIZE\{\} is one of \\CONST\{([^}]*)\}`)
	label     = regexp.MustCompile(`\\label\{(\w+)\}`)
	row       = regexp.MustCompile(`^\s*([A-Za-z0-9_\\ ]+?)\s*&\s*([a-z0-9]+)\s*(?:&(.*))?\\\\`)
)

// table is one type table: TYPENAME by C type, and the operations a row allows
// (reduction tables only).
type table struct {
	names []string
	ctype map[string]string // C type -> TYPENAME
	ops   map[string]string // TYPENAME -> operations column text
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: specnames SPEC/content")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.tex"))
	if err != nil || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "no .tex files in", os.Args[1])
		os.Exit(1)
	}
	texts := map[string][]string{}
	tables := map[string]*table{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		lines := strings.Split(string(b), "\n")
		texts[f] = lines
		readTables(lines, tables)
	}
	out := map[string]string{}
	for _, f := range files {
		scan(texts[f], tables, out)
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(strings.Fields(n)[0], out[n])
	}
}

// readTables collects the rows of each tabular up to its \label.
func readTables(lines []string, tables map[string]*table) {
	cur := &table{ctype: map[string]string{}, ops: map[string]string{}}
	for _, l := range lines {
		if strings.Contains(l, `\begin{tabular}`) {
			cur = &table{ctype: map[string]string{}, ops: map[string]string{}}
		}
		if m := row.FindStringSubmatch(l); m != nil && !strings.Contains(l, `\TYPE`) {
			ct := strings.Join(strings.Fields(strings.ReplaceAll(m[1], `\_`, "_")), " ")
			cur.names = append(cur.names, m[2])
			cur.ctype[ct] = m[2]
			cur.ops[m[2]] = m[3]
		}
		if m := label.FindStringSubmatch(l); m != nil && len(cur.names) > 0 {
			tables[m[1]] = cur
		}
	}
}

// scan expands the FuncDecls of each synopsis block by the type table or
// sizes that the text after the block names.
func scan(lines []string, tables map[string]*table, out map[string]string) {
	deprecated := 0
	lastRef := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.Contains(l, `\begin{DeprecateBlock}`) {
			deprecated++
		}
		if strings.Contains(l, `\end{DeprecateBlock}`) {
			deprecated--
		}
		kind := ""
		switch {
		case strings.Contains(l, `\begin{C11synopsis}`):
			kind = "generic"
		case strings.Contains(l, `\begin{Csynopsis}`), strings.Contains(l, `\begin{CsynopsisCol}`):
			kind = "c"
		default:
			continue
		}
		var decls []string
		j := i + 1
		for ; j < len(lines) && !strings.Contains(lines[j], `\end{`); j++ {
			for _, m := range funcDecl.FindAllStringSubmatch(lines[j], -1) {
				decls = append(decls, strings.ReplaceAll(m[1], `\_`, "_"))
			}
		}
		// The sentence after the block says which types or sizes apply; a
		// deprecated clause may follow it ("or TYPE is one of {short, ...}").
		// A block without one (the team reductions) shares the previous
		// block's table.
		var where strings.Builder
		for k := j + 1; k < len(lines) && k < j+10; k++ {
			if strings.Contains(lines[k], `\begin{`) && !strings.Contains(lines[k], `\begin{DeprecateBlock}`) {
				break
			}
			where.WriteString(lines[k] + " ")
		}
		clauses := strings.Split(where.String(), `\begin{DeprecateBlock}`)
		if m := tableRef.FindString(clauses[0]); m != "" {
			lastRef = m
		} else if lastRef != "" {
			clauses[0] += " " + lastRef
		}
		if deprecated > 0 {
			kind += "-deprecated"
		}
		for ci, clause := range clauses {
			if ci > 0 && tableRef.FindString(clause) == "" {
				continue
			}
			k := kind
			if ci > 0 && !strings.HasSuffix(k, "-deprecated") {
				k += "-deprecated"
			}
			for _, d := range decls {
				// A name can be both a C function and a C11 generic name
				// (shmem_wait_until, shmem_sync): one line for each.
				for _, n := range expand(d, clause, tables) {
					key := n + " " + strings.TrimSuffix(k, "-deprecated")
					if _, seen := out[key]; !seen {
						out[key] = k
					}
				}
			}
		}
		i = j
	}
}

func expand(decl, where string, tables map[string]*table) []string {
	switch {
	case strings.Contains(decl, `\FuncParam{TYPENAME}`):
		m := tableRef.FindStringSubmatch(where)
		if m == nil || tables[m[1]] == nil {
			fmt.Fprintf(os.Stderr, "no type table for %s: %q\n", decl, where)
			os.Exit(1)
		}
		t := tables[m[1]]
		names := t.names
		if cl := ctypeList.FindAllStringSubmatch(where, -1); len(cl) > 0 {
			names = nil
			for _, c := range cl {
				if n, ok := t.ctype[strings.ReplaceAll(c[1], `\_`, "_")]; ok {
					names = append(names, n)
				}
			}
		}
		var out []string
		for _, n := range names {
			if op := reduceOp(decl); op != "" && !strings.Contains(t.ops[n], op) {
				continue
			}
			out = append(out, strings.ReplaceAll(decl, `\FuncParam{TYPENAME}`, n))
		}
		return out
	case strings.Contains(decl, `\FuncParam{SIZE}`):
		m := sizeList.FindStringSubmatch(where)
		if m == nil {
			fmt.Fprintf(os.Stderr, "no sizes for %s: %q\n", decl, where)
			os.Exit(1)
		}
		var out []string
		for _, s := range strings.Split(m[1], ",") {
			out = append(out, strings.ReplaceAll(decl, `\FuncParam{SIZE}`, strings.TrimSpace(s)))
		}
		return out
	}
	return []string{decl}
}

// reduceOp returns the operations-column word a reduction routine needs.
func reduceOp(decl string) string {
	for _, op := range []string{"and", "or", "xor", "max", "min", "sum", "prod"} {
		if strings.HasSuffix(decl, "_"+op+"_reduce") || strings.HasSuffix(decl, "_"+op+"_to_all") {
			return strings.ToUpper(op)
		}
	}
	return ""
}
