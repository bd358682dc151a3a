package main

import (
	"go/ast"
	"strings"
)

// kinds are the root types a user writes: NatsCluster, Stream, ... but not
// their List types, which only carry items.
func (p *apiPackage) kinds() []*typeDecl {
	var kinds []*typeDecl
	for _, t := range p.types {
		if t.root && !strings.HasSuffix(t.name, "List") {
			kinds = append(kinds, t)
		}
	}
	return kinds
}

// reachable names the package's types that a kind's fields use, directly or
// through other types. Helpers of the Go API (interfaces, condition
// constants, option types) are not part of the JSON and stay out.
func (p *apiPackage) reachable() map[string]bool {
	seen := map[string]bool{}
	var visitType func(name string)
	var visitExpr func(e ast.Expr)
	visitExpr = func(e ast.Expr) {
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				visitType(id.Name)
			}
			// pkg.Name is another package's type: do not take Name for ours.
			_, isSelector := n.(*ast.SelectorExpr)
			return !isSelector
		})
	}
	visitType = func(name string) {
		t, ok := p.byName[name]
		if !ok || seen[name] || t.interfaced {
			return
		}
		seen[name] = true
		visitExpr(t.expr)
	}
	for _, k := range p.kinds() {
		visitType(k.name)
	}
	return seen
}

// localInline is the package type an inline field embeds, or nil for an
// embedded type of another package (metav1.TypeMeta).
func (p *apiPackage) localInline(f field) *typeDecl {
	if !f.inline {
		return nil
	}
	if id, ok := f.expr.(*ast.Ident); ok {
		return p.byName[id.Name]
	}
	return nil
}
