package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// apiPackage is what the reference is written from: the package's exported
// types in declaration order, and the constants declared for each named
// type (the values of an enum-like string type).
type apiPackage struct {
	name      string
	groupName string
	types     []*typeDecl
	byName    map[string]*typeDecl
	constants map[string][]constant
}

type typeDecl struct {
	name       string
	doc        []string
	markers    []marker
	expr       ast.Expr // the type's definition: a struct, or a named type's underlying type
	fields     []field  // when expr is a struct
	root       bool     // +kubebuilder:object:root
	interfaced bool     // an interface: not part of the API's JSON
}

type field struct {
	goName   string
	jsonName string
	inline   bool
	expr     ast.Expr
	doc      []string
	markers  []marker
	optional bool
}

type constant struct {
	name  string
	value string
	doc   []string
}

// loadPackage parses the non-test, non-generated Go files of dir, sorted by
// name so that "declaration order" means the same on every machine.
func loadPackage(dir string) (*apiPackage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	pkg := &apiPackage{byName: map[string]*typeDecl{}, constants: map[string][]constant{}}
	fset := token.NewFileSet()
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		pkg.name = f.Name.Name
		_, pkgMarkers := splitComment(f.Doc)
		for _, m := range pkgMarkers {
			if m.name == "groupName" {
				pkg.groupName = m.value
			}
		}
		for _, d := range f.Decls {
			gen, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gen.Tok {
			case token.TYPE:
				pkg.addTypes(gen)
			case token.CONST:
				pkg.addConstants(gen)
			}
		}
	}
	return pkg, nil
}

func (p *apiPackage) addTypes(gen *ast.GenDecl) {
	for _, s := range gen.Specs {
		ts := s.(*ast.TypeSpec)
		if !ts.Name.IsExported() {
			continue
		}
		// A lone "type X ..." carries its comment on the declaration, one of
		// a "type ( ... )" group on the spec.
		comments := []*ast.CommentGroup{ts.Doc}
		if len(gen.Specs) == 1 {
			comments = []*ast.CommentGroup{gen.Doc, ts.Doc}
		}
		doc, markers := splitComment(comments...)
		t := &typeDecl{name: ts.Name.Name, doc: doc, markers: markers, expr: ts.Type}
		for _, m := range markers {
			if m.name == "kubebuilder:object:root" {
				t.root = true
			}
		}
		switch x := ts.Type.(type) {
		case *ast.StructType:
			t.fields = structFields(x)
		case *ast.InterfaceType:
			t.interfaced = true
		}
		p.types = append(p.types, t)
		p.byName[t.name] = t
	}
}

func structFields(st *ast.StructType) []field {
	var fields []field
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			tag = reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("json")
		}
		jsonName, opts, _ := strings.Cut(tag, ",")
		if jsonName == "-" {
			continue
		}
		doc, markers := splitComment(f.Doc)
		omitempty := strings.Contains(","+opts+",", ",omitempty,")
		base := field{
			jsonName: jsonName,
			inline:   strings.Contains(","+opts+",", ",inline,"),
			expr:     f.Type,
			doc:      doc,
			markers:  markers,
			optional: isOptional(markers, omitempty),
		}
		if len(f.Names) == 0 { // embedded
			base.goName = typeName(f.Type)
			fields = append(fields, base)
			continue
		}
		for _, n := range f.Names {
			if !n.IsExported() {
				continue
			}
			fl := base
			fl.goName = n.Name
			fields = append(fields, fl)
		}
	}
	return fields
}

// addConstants records typed constants (X Kind = "v") under their type, so
// that an enum-like type lists its values with their doc comments.
func (p *apiPackage) addConstants(gen *ast.GenDecl) {
	for _, s := range gen.Specs {
		vs := s.(*ast.ValueSpec)
		ident, ok := vs.Type.(*ast.Ident)
		if !ok || len(vs.Names) != len(vs.Values) {
			continue
		}
		comments := []*ast.CommentGroup{vs.Doc}
		if len(gen.Specs) == 1 {
			comments = []*ast.CommentGroup{gen.Doc, vs.Doc}
		}
		doc, _ := splitComment(comments...)
		for i, n := range vs.Names {
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok || !n.IsExported() {
				continue
			}
			p.constants[ident.Name] = append(p.constants[ident.Name], constant{name: n.Name, value: lit.Value, doc: doc})
		}
	}
}

// typeName is the last name in a type expression: Target for Target,
// ObjectMeta for metav1.ObjectMeta, Time for *metav1.Time.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}
