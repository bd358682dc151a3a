package manager

import (
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/jetstreamcontroller"
)

// adviceDelay is how long after an advisory its resources are looked at.
const adviceDelay = 500 * time.Millisecond

// setupJetStream registers the four JetStream kinds on one shared base,
// each with workers workers of which one namespace holds perNamespace (a
// quarter when zero), and routes the pool's advisory wake-ups to them.
func setupJetStream(mgr ctrl.Manager, base *jetstreamcontroller.Base, workers, perNamespace int) error {
	routes := map[string]func(ns, name string){}
	base.Pool.OnChange = func(u jetstream.User) {
		parts := strings.SplitN(string(u), "/", 3)
		if len(parts) == 3 && routes[parts[0]] != nil {
			routes[parts[0]](parts[1], parts[2])
		}
	}
	if err := register(mgr, base, workers, perNamespace, routes, jetstream.StreamKind{}); err != nil {
		return err
	}
	if err := register(mgr, base, workers, perNamespace, routes, jetstream.ConsumerKind{}); err != nil {
		return err
	}
	if err := register(mgr, base, workers, perNamespace, routes, jetstream.KeyValueKind{}); err != nil {
		return err
	}
	return register(mgr, base, workers, perNamespace, routes, jetstream.ObjectStoreKind{})
}

func register[T v1alpha1.JetStreamObject, C any](mgr ctrl.Manager, base *jetstreamcontroller.Base, workers, perNamespace int,
	routes map[string]func(ns, name string), kind jetstream.Kind[T, C]) error {
	wakes := &jetstreamcontroller.Wakes{}
	// An advised resource is looked at a moment later, not at once: the
	// server sends a stream's delete advisory before the stream has left
	// its account, and the advisories of the operator's own writes arrive
	// before its cache has seen the status it just wrote. The news of
	// that moment comes together in one look.
	routes[kind.Name()] = func(ns, name string) { wakes.Wake(ns, name, adviceDelay) }
	r := &jetstreamcontroller.Reconciler[T, C]{Base: base, Kind: kind, Backoff: jetstreamcontroller.NewBackoff()}
	return r.SetupWithManager(mgr, workers, perNamespace, wakes)
}
