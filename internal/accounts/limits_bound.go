package accounts

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// A cluster bounds what the accounts on it may use
// (spec.auth.accounts.defaultLimits and maxLimits): each limit of an
// account's JWT is the account's own, else the cluster's default, else
// unlimited, and never above the cluster's maximum. A limit the account
// asked above the maximum is clamped to it and reported (LimitClamp), not
// refused: a refused account would keep on the servers the JWT it had,
// whose limits may be above a maximum lowered since, while a clamped one
// holds the maximum at once. A default or an unset limit brought down to
// the maximum is not reported: the account asked nothing.

// LimitClamp is a limit an account asked above its cluster's maximum,
// signed at the maximum.
type LimitClamp struct {
	// Field is the limit as spec.limits names it ("connections",
	// "jetstream.diskStorage").
	Field string
	// Asked is what the account set (-1: unlimited); Max what it got.
	Asked, Max int64
}

func (c LimitClamp) String() string {
	asked := fmt.Sprint(c.Asked)
	if c.Asked < 0 {
		asked = "unlimited"
	}
	return fmt.Sprintf("%s %s is above the cluster's maximum, %d applies", c.Field, asked, c.Max)
}

// ClampsMessage says every clamp in one line.
func ClampsMessage(clamps []LimitClamp) string {
	parts := make([]string, 0, len(clamps))
	for _, c := range clamps {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

// BoundLimits are the limits an account that asks for own gets on a
// cluster with defaults and maxima (either may be nil), and the limits
// it asked above a maximum. JetStream stays off for an account that does
// not turn it on, whatever the defaults.
func BoundLimits(own v1alpha1.AccountLimits, defaults, maxima *v1alpha1.AccountLimits) (v1alpha1.AccountLimits, []LimitClamp) {
	var def, most v1alpha1.AccountLimits
	if defaults != nil {
		def = *defaults
	}
	if maxima != nil {
		most = *maxima
	}
	var clamps []LimitClamp
	out := own
	out.Connections = bound("connections", own.Connections, def.Connections, most.Connections, &clamps)
	out.Subscriptions = bound("subscriptions", own.Subscriptions, def.Subscriptions, most.Subscriptions, &clamps)
	out.Payload = bound("payload", own.Payload, def.Payload, most.Payload, &clamps)
	if own.JetStream == nil {
		return out, clamps
	}
	var ownJS, defJS, mostJS v1alpha1.AccountJetStreamLimits
	ownJS = *own.JetStream
	if def.JetStream != nil {
		defJS = *def.JetStream
	}
	if most.JetStream != nil {
		mostJS = *most.JetStream
	}
	out.JetStream = &v1alpha1.AccountJetStreamLimits{
		MemoryStorage: toQuantity(bound("jetstream.memoryStorage", bytes(ownJS.MemoryStorage), bytes(defJS.MemoryStorage), bytes(mostJS.MemoryStorage), &clamps)),
		DiskStorage:   toQuantity(bound("jetstream.diskStorage", bytes(ownJS.DiskStorage), bytes(defJS.DiskStorage), bytes(mostJS.DiskStorage), &clamps)),
		Streams:       bound("jetstream.streams", ownJS.Streams, defJS.Streams, mostJS.Streams, &clamps),
		Consumers:     bound("jetstream.consumers", ownJS.Consumers, defJS.Consumers, mostJS.Consumers, &clamps),
	}
	return out, clamps
}

// bound is one limit: own, else def, else unlimited (nil), brought down
// to most when that is set and not -1. Only own above most is a clamp.
func bound(field string, own, def, most *int64, clamps *[]LimitClamp) *int64 {
	v := own
	if v == nil {
		v = def
	}
	if most == nil || *most < 0 {
		return v
	}
	if v != nil && *v >= 0 && *v <= *most {
		return v
	}
	if own != nil && (*own < 0 || *own > *most) {
		*clamps = append(*clamps, LimitClamp{Field: field, Asked: *own, Max: *most})
	}
	m := *most
	return &m
}

func bytes(q *resource.Quantity) *int64 {
	if q == nil {
		return nil
	}
	v := q.Value()
	return &v
}

func toQuantity(v *int64) *resource.Quantity {
	if v == nil {
		return nil
	}
	return resource.NewQuantity(*v, resource.BinarySI)
}
