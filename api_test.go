package shmem_test

import (
	"flag"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var rewriteAPI = flag.Bool("rewrite-api", false, "rewrite testdata/api.txt from the packages")

// TestAPISurface lists every exported identifier (types, funcs, consts,
// vars, and the methods and fields of exported types) of every package a
// user can import, and compares the list with testdata/api.txt. A
// difference fails: adding to the public surface is a reviewed decision,
// made by running the test with -rewrite-api and reading the diff.
func TestAPISurface(t *testing.T) {
	got := strings.Join(apiSurface(t, "."), "\n") + "\n"
	const golden = "testdata/api.txt"
	if *rewriteAPI {
		// The header of "#" lines, the review notes, is kept.
		old, _ := os.ReadFile(golden)
		var header strings.Builder
		for _, l := range strings.Split(string(old), "\n") {
			if !strings.HasPrefix(l, "#") {
				break
			}
			header.WriteString(l + "\n")
		}
		if err := os.WriteFile(golden, []byte(header.String()+got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(got, "\n"), reviewed(string(want))
	for _, l := range gl {
		if l != "" && !slices.Contains(wl, l) {
			t.Errorf("exported but not in %s: %s", golden, l)
		}
	}
	for _, l := range wl {
		if l != "" && !slices.Contains(gl, l) {
			t.Errorf("in %s but no longer exported: %s", golden, l)
		}
	}
}

// reviewed returns the identifiers of the golden list: its lines less
// blank lines and the "#" lines of its header, the review notes.
func reviewed(golden string) []string {
	var out []string
	for _, l := range strings.Split(golden, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// apiSurface walks the module at root and returns one sorted line per
// exported identifier of its importable, non-main packages.
func apiSurface(t *testing.T, root string) []string {
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel := filepath.ToSlash(path)
		base := d.Name()
		if rel != "." && (base == "internal" || base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil || pkg.Name == "main" {
			return nil // no Go files for this platform, or a command
		}
		lines = append(lines, exported(t, rel, path, pkg.GoFiles)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines
}

// exported returns the exported identifiers declared in files of dir, each
// prefixed with the package's path relative to the module.
func exported(t *testing.T, rel, dir string, files []string) []string {
	var out []string
	add := func(kind, name string) { out = append(out, rel+": "+kind+" "+name) }
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					add("func", d.Name.Name)
				} else if recv := recvName(d.Recv.List[0].Type); ast.IsExported(recv) {
					add("method", recv+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							add("type", s.Name.Name)
							typeMembers(s, add)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								add(strings.ToLower(d.Tok.String()), n.Name)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// typeMembers adds the exported fields of a struct type and the methods of an
// interface type.
func typeMembers(s *ast.TypeSpec, add func(kind, name string)) {
	var list *ast.FieldList
	kind := "field"
	switch ty := s.Type.(type) {
	case *ast.StructType:
		list = ty.Fields
	case *ast.InterfaceType:
		list, kind = ty.Methods, "method"
	default:
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			if n.IsExported() {
				add(kind, s.Name.Name+"."+n.Name)
			}
		}
		if len(f.Names) == 0 { // embedded
			if n := recvName(f.Type); ast.IsExported(n) {
				add("embedded", s.Name.Name+"."+n)
			}
		}
	}
}

// recvName returns the type name of a receiver or embedded field: T, *T,
// T[P], pkg.T.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}
