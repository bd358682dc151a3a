package accounts

import (
	"testing"

	"github.com/nats-io/jwt/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// TestBoundLimits: an account's JWT limits are its own, else the
// cluster's default, else unlimited, never above the cluster's maximum,
// and only what the account asked above the maximum is reported.
// Careless variants caught (each run): bounding only the limits the
// account sets (one that sets none stays unlimited under a maximum), a
// default taken above the maximum, -1 ("unlimited") let through a
// maximum, a clamp not reported, a default that turns JetStream on.
func TestBoundLimits(t *testing.T) {
	gi := func(n int64) *resource.Quantity { return resource.NewQuantity(n<<30, resource.BinarySI) }
	maxima := &v1alpha1.AccountLimits{Connections: ptr.To[int64](100), Payload: ptr.To[int64](-1),
		JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: gi(10), Streams: ptr.To[int64](5)}}
	defaults := &v1alpha1.AccountLimits{Connections: ptr.To[int64](10), Subscriptions: ptr.To[int64](1000),
		JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: gi(1), Streams: ptr.To[int64](50)}}
	for _, tc := range []struct {
		name             string
		own              v1alpha1.AccountLimits
		defaults, maxima *v1alpha1.AccountLimits
		want             jwt.OperatorLimits
		clamped          []string
	}{
		{name: "nothing bounded: unlimited", want: limitsOf(-1, -1, -1)},
		{name: "a maximum, nothing asked: the maximum", maxima: maxima, want: limitsOf(100, -1, -1)},
		{name: "a default, nothing asked: the default", defaults: defaults, want: limitsOf(10, 1000, -1)},
		{name: "asked within the maximum: as asked", maxima: maxima, defaults: defaults,
			own: v1alpha1.AccountLimits{Connections: ptr.To[int64](50), Payload: ptr.To[int64](1 << 20)}, want: limitsOf(50, 1000, 1<<20)},
		{name: "asked above the maximum: the maximum, reported", maxima: maxima,
			own: v1alpha1.AccountLimits{Connections: ptr.To[int64](500)}, want: limitsOf(100, -1, -1), clamped: []string{"connections"}},
		{name: "asked unlimited under a maximum: the maximum, reported", maxima: maxima,
			own: v1alpha1.AccountLimits{Connections: ptr.To[int64](-1)}, want: limitsOf(100, -1, -1), clamped: []string{"connections"}},
		{name: "a default above the maximum: the maximum, not the account's doing", maxima: &v1alpha1.AccountLimits{Subscriptions: ptr.To[int64](10)},
			defaults: defaults, want: limitsOf(10, 10, -1)},
		{name: "JetStream off stays off, whatever the defaults", maxima: maxima, defaults: defaults,
			own: v1alpha1.AccountLimits{}, want: limitsOf(10, 1000, -1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, clamps := BoundLimits(tc.own, tc.defaults, tc.maxima)
			c, _, _ := AccountClaims(Account{Ref: teamA, PublicKey: pubA, Spec: v1alpha1.NatsAccountSpec{Limits: got}}, nil)
			if c.Limits.Conn != tc.want.Conn || c.Limits.Subs != tc.want.Subs || c.Limits.Payload != tc.want.Payload {
				t.Errorf("JWT limits conn %d subs %d payload %d, want %d %d %d", c.Limits.Conn, c.Limits.Subs, c.Limits.Payload,
					tc.want.Conn, tc.want.Subs, tc.want.Payload)
			}
			if c.Limits.DiskStorage != 0 || c.Limits.Streams != 0 {
				t.Errorf("JetStream turned on (disk %d, streams %d) for an account that did not ask", c.Limits.DiskStorage, c.Limits.Streams)
			}
			assertClamped(t, clamps, tc.clamped)
		})
	}

	t.Run("JetStream: own, default, maximum field by field", func(t *testing.T) {
		own := v1alpha1.AccountLimits{JetStream: &v1alpha1.AccountJetStreamLimits{DiskStorage: gi(100), Consumers: ptr.To[int64](7)}}
		got, clamps := BoundLimits(own, defaults, maxima)
		c, _, _ := AccountClaims(Account{Ref: teamA, PublicKey: pubA, Spec: v1alpha1.NatsAccountSpec{Limits: got}}, nil)
		l := c.Limits.JetStreamLimits
		if l.DiskStorage != 10<<30 || l.Streams != 5 || l.Consumer != 7 || l.MemoryStorage != -1 {
			t.Errorf("JetStream limits %+v: want disk 10Gi (maximum), streams 5 (default 50 above the maximum), consumers 7, memory unlimited", l)
		}
		assertClamped(t, clamps, []string{"jetstream.diskStorage"})
		if own.JetStream.DiskStorage.Value() != 100<<30 {
			t.Error("the account's own spec was changed")
		}
	})
}

func limitsOf(conn, subs, payload int64) jwt.OperatorLimits {
	var l jwt.OperatorLimits
	l.Conn, l.Subs, l.Payload = conn, subs, payload
	return l
}

func assertClamped(t *testing.T, clamps []LimitClamp, want []string) {
	t.Helper()
	if len(clamps) != len(want) {
		t.Fatalf("clamped %v, want %v", clamps, want)
	}
	for i, c := range clamps {
		if c.Field != want[i] {
			t.Fatalf("clamped %v, want %v", clamps, want)
		}
	}
}
