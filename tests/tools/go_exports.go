// Prints, for each Go file given on the command line, what go/ast says it exports:
// {path: {name: [member names] | null}} as JSON. Methods are "Recv.Method"; struct members are exported
// fields and embedded types, interface members exported methods and embedded interfaces. In a _test.go file the
// functions `go test` runs (`go help testfunc`: TestXxx, BenchmarkXxx, ExampleXxx, FuzzXxx) are left out: no
// other package can call them.
// Run: go run go_exports.go files…
package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// isTestFunc is cmd/go's rule: the prefix alone, or followed by a rune that is not a lower-case letter.
func isTestFunc(name string) bool {
	for _, prefix := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if len(name) == len(prefix) {
			return true
		}
		r, _ := utf8.DecodeRuneInString(name[len(prefix):])
		if !unicode.IsLower(r) {
			return true
		}
	}
	return false
}

func baseName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return baseName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.IndexExpr:
		return baseName(t.X)
	case *ast.IndexListExpr:
		return baseName(t.X)
	case *ast.ParenExpr:
		return baseName(t.X)
	}
	return ""
}

func fieldNames(list *ast.FieldList) []string {
	out := []string{}
	if list == nil {
		return out
	}
	for _, f := range list.List {
		if len(f.Names) == 0 {
			if n := baseName(f.Type); ast.IsExported(n) {
				out = append(out, n)
			}
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				out = append(out, n.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func main() {
	result := map[string]map[string][]string{}
	fset := token.NewFileSet()
	for _, path := range os.Args[1:] {
		out := map[string][]string{}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			result[path] = nil
			continue
		}
		for _, d := range f.Decls {
			switch decl := d.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					if decl.Name.IsExported() && !(strings.HasSuffix(path, "_test.go") && isTestFunc(decl.Name.Name)) {
						out[decl.Name.Name] = nil
					}
				} else if len(decl.Recv.List) > 0 {
					recv := baseName(decl.Recv.List[0].Type)
					if decl.Name.IsExported() && ast.IsExported(recv) {
						out[recv+"."+decl.Name.Name] = nil
					}
				}
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					switch spec := s.(type) {
					case *ast.TypeSpec:
						if !spec.Name.IsExported() {
							continue
						}
						var members []string
						switch t := spec.Type.(type) {
						case *ast.StructType:
							if spec.Assign == 0 {
								members = fieldNames(t.Fields)
							}
						case *ast.InterfaceType:
							if spec.Assign == 0 {
								members = fieldNames(t.Methods)
							}
						}
						out[spec.Name.Name] = members
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							if n.IsExported() {
								out[n.Name] = nil
							}
						}
					}
				}
			}
		}
		result[path] = out
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(result); err != nil {
		os.Exit(1)
	}
}
