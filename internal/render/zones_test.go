package render_test

import (
	"fmt"
	"testing"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

// TestZoneTagsReachTheServer: each server carries its node's zone and
// region as JetStream server tags (the pod labels Kubernetes copies from
// the node, read through the downward API), and unique_tag on the zone
// only when the controller decided the replicas spread and the spec lets
// it. Loaded by nats-server's own config parser with the pod's environment.
// Careless variants this catches: tags written inside one string without
// the kubelet's expansion ("zone:$KUBENATS_ZONE" stays literal), a
// unique_tag without the prefix's colon (nats-server then matches any tag
// starting "zone", such as "zoneless:x"), unique_tag kept when the user's
// own server_tags replace the zone tags (every server would lose its
// placement).
func TestZoneTagsReachTheServer(t *testing.T) {
	zoneTags := fmt.Sprint([]string{"zone:" + madeUpZone, "region:" + madeUpRegion})
	for _, tc := range []struct {
		name       string
		in         *v1alpha1.NatsCluster
		spread     bool
		tags       string
		uniqueTag  string
		restartDif bool
	}{
		{"tags by default, placement the servers' own", cluster(), false, zoneTags, "", false},
		{"three zones: replicas in different zones", cluster(), true, zoneTags, "zone:", true},
		{"zoneSpread Off", cluster(func(c *v1alpha1.NatsCluster) { c.Spec.JetStream.ZoneSpread = v1alpha1.ZoneSpreadOff }), true, zoneTags, "", false},
		{"the user's server_tags replace the zone tags, and no unique_tag", cluster(withConfig("server_tags", `["tier:gold"]`)), true, "[tier:gold]", "", false},
		{"no JetStream, no tags", cluster(withJetStream(false)), true, "[]", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := loadAsServerWith(t, tc.in, render.Inputs{SpreadZones: tc.spread})
			if tags := fmt.Sprint([]string(got.opts.Tags)); tags != tc.tags {
				t.Errorf("server tags %s, want %s", tags, tc.tags)
			}
			if got.opts.JetStreamUniqueTag != tc.uniqueTag {
				t.Errorf("unique_tag %q, want %q", got.opts.JetStreamUniqueTag, tc.uniqueTag)
			}
			// nats-server cannot reload unique_tag: its change must restart.
			off, err := render.ConfWith(tc.in, render.Inputs{})
			if err != nil {
				t.Fatal(err)
			}
			on, err := render.ConfWith(tc.in, render.Inputs{SpreadZones: tc.spread})
			if err != nil {
				t.Fatal(err)
			}
			if (off.RestartHash != on.RestartHash) != tc.restartDif {
				t.Errorf("restart hash changed %v by the spread, want %v", off.RestartHash != on.RestartHash, tc.restartDif)
			}
		})
	}
}
