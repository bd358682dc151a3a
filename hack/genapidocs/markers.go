package main

import (
	"strconv"
	"strings"
)

// marker is one "+name=value" line of a doc comment. For the markers with
// arguments (XValidation, resource) args holds them by key.
type marker struct {
	name  string
	value string
	args  map[string]string
}

// Marker names with key=value arguments after a colon: controller-gen writes
// "+kubebuilder:validation:XValidation:rule=...,message=...", so the first
// argument's key is glued to the marker's name.
var markersWithArgs = []string{
	"kubebuilder:validation:XValidation",
	"kubebuilder:resource",
}

func parseMarker(text string) marker {
	for _, name := range markersWithArgs {
		if rest, ok := strings.CutPrefix(text, name+":"); ok {
			return marker{name: name, args: parseArgs(rest)}
		}
	}
	name, value, _ := strings.Cut(text, "=")
	return marker{name: name, value: value}
}

// parseArgs reads key=value pairs separated by commas, where a value is a
// Go string literal (quoted or in backticks) or a bare word.
func parseArgs(s string) map[string]string {
	args := map[string]string{}
	for s != "" {
		key, rest, ok := strings.Cut(s, "=")
		if !ok {
			args[s] = ""
			break
		}
		var value string
		if quoted, err := strconv.QuotedPrefix(rest); err == nil {
			value, _ = strconv.Unquote(quoted)
			rest = rest[len(quoted):]
		} else {
			value, rest, _ = strings.Cut(rest, ",")
			rest = "," + rest
			if rest == "," {
				rest = ""
			}
		}
		args[key] = value
		s = strings.TrimPrefix(rest, ",")
	}
	return args
}

// unquoteValue strips the quotes or backticks a marker value may carry
// (Pattern=`^a$`, default="x"); a value that is not a literal is returned
// as it is ({}, 3, file;memory).
func unquoteValue(v string) string {
	if u, err := strconv.Unquote(v); err == nil {
		return u
	}
	return v
}

// Markers that say nothing a reader of the reference needs, or that the
// writer shows elsewhere (resource, subresource on the kind's own line).
var markersNotListed = map[string]bool{
	"kubebuilder:object:root":        true,
	"kubebuilder:object:generate":    true,
	"kubebuilder:subresource:status": true,
	"kubebuilder:resource":           true,
	"kubebuilder:printcolumn:name":   true,
	"optional":                       true,
	"required":                       true,
	"groupName":                      true,
}

// describeMarker turns a marker into the phrase the reference prints, or ""
// for a marker not listed. A marker this program does not know is printed
// as written, so that a new kind of validation is never silently dropped.
func describeMarker(m marker) string {
	if markersNotListed[m.name] {
		return ""
	}
	v := unquoteValue(m.value)
	switch m.name {
	case "kubebuilder:default":
		return "Default: " + code(m.value)
	case "kubebuilder:validation:Enum":
		values := strings.Split(v, ";")
		for i := range values {
			values[i] = code(values[i])
		}
		return "One of: " + strings.Join(values, ", ")
	case "kubebuilder:validation:Minimum":
		return "Minimum: " + v
	case "kubebuilder:validation:Maximum":
		return "Maximum: " + v
	case "kubebuilder:validation:MinLength":
		return "Min length: " + v
	case "kubebuilder:validation:MaxLength":
		return "Max length: " + v
	case "kubebuilder:validation:MinItems":
		return "Min items: " + v
	case "kubebuilder:validation:MaxItems":
		return "Max items: " + v
	case "kubebuilder:validation:MinProperties":
		return "Min properties: " + v
	case "kubebuilder:validation:MaxProperties":
		return "Max properties: " + v
	case "kubebuilder:validation:Pattern":
		return "Pattern: " + code(v)
	case "kubebuilder:validation:items:MaxLength":
		return "Each item's max length: " + v
	case "kubebuilder:validation:items:Pattern":
		return "Each item's pattern: " + code(v)
	case "kubebuilder:validation:XIntOrString":
		return "An integer or a string"
	case "listType":
		return "List type: " + code(v)
	case "listMapKey":
		return "List map key: " + code(v)
	case "kubebuilder:validation:XValidation":
		rule := "Rule: " + code(m.args["rule"])
		if msg := m.args["message"]; msg != "" {
			rule += "; refused otherwise: " + quote(msg)
		}
		return rule
	}
	if m.value == "" {
		return code("+" + m.name)
	}
	return code("+" + m.name + "=" + m.value)
}

// isOptional follows controller-gen: a field is optional when it says so
// with +optional, or when its JSON tag omits it when empty; +required (or
// the kubebuilder spelling) wins.
func isOptional(markers []marker, omitempty bool) bool {
	optional := omitempty
	for _, m := range markers {
		switch m.name {
		case "optional", "kubebuilder:validation:Optional":
			optional = true
		case "required", "kubebuilder:validation:Required":
			return false
		}
	}
	return optional
}
