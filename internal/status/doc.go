// Package status computes a resource's status from what the controller
// observed. Every function is pure, so the whole decision table is tested
// without a cluster; the controller writes the result once per pass.
package status
