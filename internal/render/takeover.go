package render

import (
	"fmt"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// A cluster that took over a release of the official chart keeps the shape
// the chart gave its StatefulSet, whose selector and claim template cannot
// change: the pods it adopts must match the selector, and the claims they
// reuse are named after the template. Everything that depends on it reads
// it here.
const (
	// chartComponent is the chart's app.kubernetes.io/component, part of
	// its selector.
	chartComponent = "nats"
)

// Route modes, the values of AnnotationRouteTLS: what a server's routes
// demand of a peer. Servers of different modes do not route to each
// other, so a change is never rolled one server at a time.
const (
	RoutesTLS      = "true"  // password and mutual TLS
	RoutesPassword = "false" // password only (route TLS disabled)
	RoutesOpen     = "open"  // nothing, as the chart's routes
)

// componentLabel is every child's app.kubernetes.io/component.
func componentLabel(c *v1alpha1.NatsCluster) string {
	if c.Spec.TakingOver() {
		return chartComponent
	}
	return "server"
}

// RouteMode is what the routes of c's servers demand now. During a
// takeover they stay open, as the chart's, until every server is
// kubenats': only then can they close, all at once.
func RouteMode(c *v1alpha1.NatsCluster) string {
	switch {
	case !c.HasRoutes():
		return RoutesPassword // no routes: nothing to change at once
	case c.Spec.TakingOver() && takeoverPhase(c) == v1alpha1.TakeoverReplacingServers:
		return RoutesOpen
	case c.Spec.RouteTLSEnabled():
		return RoutesTLS
	default:
		return RoutesPassword
	}
}

// PodRouteMode is the route mode a server pod of c runs: its annotation,
// or, for a pod without one, open in a takeover (the chart's pod) and
// password otherwise (a pod of a release before route TLS).
func PodRouteMode(c *v1alpha1.NatsCluster, annotations map[string]string) string {
	if mode, ok := annotations[AnnotationRouteTLS]; ok {
		return mode
	}
	if c.Spec.TakingOver() {
		return RoutesOpen
	}
	return RoutesPassword
}

// takeoverPhase is the takeover's phase; a takeover that has not begun
// replaces servers first.
func takeoverPhase(c *v1alpha1.NatsCluster) v1alpha1.TakeoverPhase {
	if t := c.Status.Takeover; t != nil && t.Phase != "" {
		return t.Phase
	}
	return v1alpha1.TakeoverReplacingServers
}

// openRoutes are the chart's route URLs: every server, no credentials.
func openRoutes(c *v1alpha1.NatsCluster) []string {
	routes := make([]string, c.Spec.ReplicaCount())
	for i := range routes {
		routes[i] = fmt.Sprintf("nats://%s.%s:%d", c.PodName(i), c.HeadlessServiceName(), ClusterPort)
	}
	return routes
}
