package loopback

import "testing"

func TestEffectiveMode(t *testing.T) {
	app := map[string]string{"app": "nats"}
	strictWorkload := PeerAuthentication{Namespace: "ns", Selector: app, Mode: ModeStrict,
		PortLevel: map[int32]MTLSMode{8222: ModeDisable, 6222: ModeUnset}}
	cases := []struct {
		name     string
		policies []PeerAuthentication
		labels   map[string]string
		port     int32
		want     MTLSMode
	}{
		{"no policy: PERMISSIVE", nil, app, 4222, ModePermissive},
		{"mesh-wide STRICT", []PeerAuthentication{{Namespace: meshRootNamespace, Mode: ModeStrict}}, app, 4222, ModeStrict},
		{"mesh-wide UNSET: PERMISSIVE", []PeerAuthentication{{Namespace: meshRootNamespace, Mode: ModeUnset}}, app, 4222, ModePermissive},
		{"namespace beats mesh", []PeerAuthentication{{Namespace: meshRootNamespace, Mode: ModeStrict}, {Namespace: "ns", Mode: ModeDisable}}, app, 4222, ModeDisable},
		{"another namespace's policy does not apply", []PeerAuthentication{{Namespace: "other", Mode: ModeStrict}}, app, 4222, ModePermissive},
		{"workload beats namespace", []PeerAuthentication{{Namespace: "ns", Mode: ModePermissive}, strictWorkload}, app, 4222, ModeStrict},
		{"port level beats the workload's mode", []PeerAuthentication{strictWorkload}, app, 8222, ModeDisable},
		{"port level UNSET inherits the workload's mode", []PeerAuthentication{strictWorkload}, app, 6222, ModeStrict},
		{"selector that does not match", []PeerAuthentication{strictWorkload}, map[string]string{"app": "other"}, 4222, ModePermissive},
		{"workload UNSET inherits the namespace", []PeerAuthentication{{Namespace: "ns", Mode: ModeStrict},
			{Namespace: "ns", Selector: app, Mode: ModeUnset, PortLevel: map[int32]MTLSMode{6222: ModePermissive}}}, app, 4222, ModeStrict},
		{"workload UNSET, its port level still applies", []PeerAuthentication{{Namespace: "ns", Mode: ModeStrict},
			{Namespace: "ns", Selector: app, Mode: ModeUnset, PortLevel: map[int32]MTLSMode{6222: ModePermissive}}}, app, 6222, ModePermissive},
		{"port level in a namespace-wide policy is ignored", []PeerAuthentication{{Namespace: "ns", Mode: ModeStrict,
			PortLevel: map[int32]MTLSMode{4222: ModeDisable}}}, app, 4222, ModeStrict},
		{"a selective policy in the root namespace is not mesh-wide", []PeerAuthentication{{Namespace: meshRootNamespace, Selector: app, Mode: ModeStrict}}, app, 4222, ModePermissive},
		{"the first matching workload policy wins", []PeerAuthentication{{Namespace: "ns", Selector: app, Mode: ModeDisable}, strictWorkload}, app, 4222, ModeDisable},
	}
	for _, c := range cases {
		if got := effectiveMode(c.policies, "ns", c.labels, c.port); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
