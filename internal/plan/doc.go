// Package plan holds the operator's decisions as pure functions: given what
// was observed, the one next step, or what to wait for. The controllers
// observe, ask a plan, carry the step out and come back.
package plan
