package render_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/utils/ptr"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/render"
)

func withWebSocket(ws v1alpha1.WebSocketSpec) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.WebSocket = &ws }
}

func withMQTT(m v1alpha1.MQTTSpec) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.MQTT = &m }
}

func withClientVerify() func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.TLS.Client.Verify = true }
}

// TestListenersInNatsConf renders every field of spec.websocket and
// spec.mqtt and loads the result with nats-server's own option processing,
// certificates where the pod mounts them. A renderer that dropped a field,
// or served a listener in plaintext while spec.tls.client is set, fails
// the field's check.
func TestListenersInNatsConf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    *v1alpha1.NatsCluster
		check func(t *testing.T, got loadedConf)
	}{
		{"websocket with client TLS, origins and compression",
			cluster(withClientTLS("my-tls"), withWebSocket(v1alpha1.WebSocketSpec{AllowedOrigins: []string{"https://app.example.com"}, Compression: true})),
			func(t *testing.T, got loadedConf) {
				ws := got.opts.Websocket
				equal(t, "Websocket.Port", ws.Port, int(v1alpha1.DefaultWebSocketPort))
				equal(t, "Websocket TLS", ws.TLSConfig != nil, true)
				equal(t, "Websocket.NoTLS", ws.NoTLS, false)
				equal(t, "Websocket.Compression", ws.Compression, true)
				equal(t, "Websocket.AllowedOrigins", strings.Join(ws.AllowedOrigins, ","), "https://app.example.com")
				equal(t, "MQTT.Port", got.opts.MQTT.Port, 0)
				equal(t, "websocket cert_file", lookupString(t, got.raw, "websocket", "tls", "cert_file"), lookupString(t, got.raw, "tls", "cert_file"))
			}},
		{"websocket verifies client certificates when the client port does",
			cluster(withClientTLS("my-tls"), withClientVerify(), withWebSocket(v1alpha1.WebSocketSpec{})),
			func(t *testing.T, got loadedConf) {
				equal(t, "Websocket TLSMap/verify", got.opts.Websocket.TLSConfig.ClientAuth.String(), got.opts.TLSConfig.ClientAuth.String())
			}},
		{"websocket behind a TLS-terminating proxy, own port",
			cluster(withWebSocket(v1alpha1.WebSocketSpec{Port: 9090, NoTLS: true})),
			func(t *testing.T, got loadedConf) {
				ws := got.opts.Websocket
				equal(t, "Websocket.Port", ws.Port, 9090)
				equal(t, "Websocket.NoTLS", ws.NoTLS, true)
				equal(t, "Websocket TLS", ws.TLSConfig != nil, false)
				equal(t, "Websocket.Compression", ws.Compression, false)
			}},
		{"websocket noTLS wins over spec.tls.client",
			cluster(withClientTLS("my-tls"), withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true})),
			func(t *testing.T, got loadedConf) {
				equal(t, "Websocket.NoTLS", got.opts.Websocket.NoTLS, true)
				equal(t, "Websocket TLS", got.opts.Websocket.TLSConfig != nil, false)
				equal(t, "client TLS", got.opts.TLSConfig != nil, true)
			}},
		{"mqtt with the default client TLS, default port",
			cluster(withMQTT(v1alpha1.MQTTSpec{})),
			func(t *testing.T, got loadedConf) {
				m := got.opts.MQTT
				equal(t, "MQTT.Port", m.Port, int(v1alpha1.DefaultMQTTPort))
				equal(t, "MQTT TLS", m.TLSConfig != nil, true)
				equal(t, "AllowNonTLS", got.opts.AllowNonTLS, false)
				equal(t, "MQTT.StreamReplicas", m.StreamReplicas, 0)
				equal(t, "ServerName", got.opts.ServerName, "demo-0")
				equal(t, "JetStream", got.opts.JetStream, true)
			}},
		{"mqtt with client TLS, port and stream replicas",
			cluster(withClientTLS("my-tls"), withMQTT(v1alpha1.MQTTSpec{Port: 8883, StreamReplicas: ptr.To[int32](3)})),
			func(t *testing.T, got loadedConf) {
				m := got.opts.MQTT
				equal(t, "MQTT.Port", m.Port, 8883)
				equal(t, "MQTT TLS", m.TLSConfig != nil, true)
				equal(t, "MQTT.StreamReplicas", m.StreamReplicas, 3)
			}},
		{"both listeners, users: the client port's users, no listener-level auth",
			cluster(withClientTLS("my-tls"), withWebSocket(v1alpha1.WebSocketSpec{}), withMQTT(v1alpha1.MQTTSpec{})),
			func(t *testing.T, got loadedConf) {
				ws, m := got.opts.Websocket, got.opts.MQTT
				for what, v := range map[string]string{"ws user": ws.Username, "ws token": ws.Token, "ws no_auth_user": ws.NoAuthUser,
					"mqtt user": m.Username, "mqtt token": m.Token, "mqtt no_auth_user": m.NoAuthUser, "global no_auth_user": got.opts.NoAuthUser} {
					equal(t, what, v, "")
				}
				equal(t, "Websocket.Port", ws.Port, 8080)
				equal(t, "MQTT.Port", m.Port, 1883)
				expectAccountUsers(t, got)
			}},
		{"both listeners, token",
			cluster(withAuthMode(v1alpha1.AuthToken), withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true}), withMQTT(v1alpha1.MQTTSpec{})),
			func(t *testing.T, got loadedConf) {
				if got.opts.Authorization == "" {
					t.Error("token mode without a token")
				}
				equal(t, "ws token", got.opts.Websocket.Token, "")
				equal(t, "mqtt token", got.opts.MQTT.Token, "")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, loadAsServer(t, tc.in)) })
	}
}

// expectAccountUsers: mode users still puts every client, WebSocket and
// MQTT ones too, in the APP account with a password.
func expectAccountUsers(t *testing.T, got loadedConf) {
	t.Helper()
	if len(got.opts.Users) == 0 {
		t.Fatal("no users: the listeners would be open to anyone")
	}
	for _, u := range got.opts.Users {
		if u.Password == "" {
			t.Errorf("user %s has no password", u.Username)
		}
	}
}

func lookupString(t *testing.T, m map[string]any, path ...string) string {
	t.Helper()
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("%v: not a block at %s", path, k)
		}
		cur = mm[k]
	}
	s, _ := cur.(string)
	return s
}

// TestListenersRefusedWithoutAdmission: specs that admission refuses, met
// by `kubenats render` or an API server without the rules, fail render
// with the reason (the controller reports it as ConfigInvalid), never a
// nats.conf that stops every server at start.
func TestListenersRefusedWithoutAdmission(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want string
	}{
		{"mqtt without JetStream", cluster(withJetStream(false), withMQTT(v1alpha1.MQTTSpec{})), "needs the jetstream block"},
		{"mqtt on the websocket port", cluster(withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true}), withMQTT(v1alpha1.MQTTSpec{Port: 8080})), "both 8080"},
		{"websocket on the client port", cluster(withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true, Port: 4222})), "both 4222"},
		{"websocket origin with a path", cluster(withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true, AllowedOrigins: []string{"https://a.example/x"}})), "scheme://host"},
		{"websocket from without a selector", cluster(withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true, From: []v1alpha1.NetworkPolicyPeer{{}}})), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" { // refused by the NetworkPolicy, which needs enabling
				tc.in.Spec.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Enabled: true}
				tc.want = "spec.websocket.from[0]"
			}
			_, err := render.Objects(tc.in, render.Inputs{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Objects error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestConfigStillRefusesListenerKeys: spec.config cannot open a listener
// beside the typed fields (one with an authorization of its own, or
// none).
func TestConfigStillRefusesListenerKeys(t *testing.T) {
	for _, key := range []string{"websocket", "mqtt", "ws", "Websocket"} {
		_, err := render.Objects(cluster(withConfig(key, `{"port": 8080, "no_tls": true}`)), render.Inputs{})
		if err == nil || !strings.Contains(err.Error(), "not an allowed passthrough setting") {
			t.Errorf("config.%s: Objects error = %v", key, err)
		}
	}
}

// TestListenerPorts: each listener is a named port of the container and of
// both Services (Istio matches only declared ports on the headless one),
// with the protocol it speaks from its first byte. A port on one Service
// and not the other, or an undeclared protocol a sidecar would sniff,
// fails.
func TestListenerPorts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *v1alpha1.NatsCluster
		want map[string]string // port name -> "number/appProtocol"
	}{
		{"none", cluster(), map[string]string{}},
		{"websocket plaintext", cluster(withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true})), map[string]string{"websocket": "8080/http"}},
		{"websocket TLS", cluster(withClientTLS("t"), withWebSocket(v1alpha1.WebSocketSpec{Port: 8443})), map[string]string{"websocket": "8443/https"}},
		{"mqtt with the default client TLS", cluster(withMQTT(v1alpha1.MQTTSpec{})), map[string]string{"mqtt": "1883/tls"}},
		{"mqtt accepting plaintext", cluster(withMQTT(v1alpha1.MQTTSpec{}), withPlaintextClients()), map[string]string{"mqtt": "1883/tcp"}},
		{"mqtt TLS", cluster(withClientTLS("t"), withMQTT(v1alpha1.MQTTSpec{Port: 8883})), map[string]string{"mqtt": "8883/tls"}},
		{"both", cluster(withClientTLS("t"), withWebSocket(v1alpha1.WebSocketSpec{}), withMQTT(v1alpha1.MQTTSpec{})),
			map[string]string{"websocket": "8080/https", "mqtt": "1883/tls"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := renderObjects(t, tc.in, render.Inputs{})
			for _, svcName := range []string{tc.in.ClientServiceName(), tc.in.HeadlessServiceName()} {
				svc := find[*corev1.Service](t, objs, svcName)
				got := map[string]string{}
				for _, p := range svc.Spec.Ports {
					if p.Name != "websocket" && p.Name != "mqtt" {
						continue
					}
					got[p.Name] = itoa32(p.Port) + "/" + ptr.Deref(p.AppProtocol, "")
					equal(t, svcName+" "+p.Name+" targetPort", p.TargetPort.String(), p.Name)
					equal(t, svcName+" "+p.Name+" protocol", p.Protocol, corev1.ProtocolTCP)
				}
				equal(t, svcName+" listener ports", mapString(got), mapString(tc.want))
			}
			ctr := serverContainerOf(t, tc.in)
			got := map[string]string{}
			for _, p := range ctr.Ports {
				if p.Name == "websocket" || p.Name == "mqtt" {
					got[p.Name] = itoa32(p.ContainerPort)
				}
			}
			want := map[string]string{}
			for k, v := range tc.want {
				want[k] = strings.SplitN(v, "/", 2)[0]
			}
			equal(t, "container listener ports", mapString(got), mapString(want))
		})
	}
}

func itoa32(n int32) string { return strconv.Itoa(int(n)) }

func mapString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + ";")
	}
	return b.String()
}

// rulesOnPort are the policy's ingress rules that name port.
func rulesOnPort(np *networkingv1.NetworkPolicy, port int32) []networkingv1.NetworkPolicyIngressRule {
	var out []networkingv1.NetworkPolicyIngressRule
	for _, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Port != nil && p.Port.IntVal == port {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestListenerNetworkPolicy: each listener admits its own from, or else
// the client port's peers, and never the operator (it speaks neither
// protocol). With no peers at all the port gets no rule: the careless
// variant, a rule with an empty from, admits every source in the cluster
// and beyond, and fails "closed when nobody is named".
func TestListenerNetworkPolicy(t *testing.T) {
	team := v1alpha1.NetworkPolicyPeer{NamespaceSelector: labelSelector("team", "web")}
	devices := v1alpha1.NetworkPolicyPeer{IPBlock: &v1alpha1.IPBlock{CIDR: "203.0.113.0/24"}}
	for _, tc := range []struct {
		name     string
		np       v1alpha1.NetworkPolicySpec
		ws, mqtt []v1alpha1.NetworkPolicyPeer
		wantWS   []string // peers' descriptions; nil: no rule
		wantMQTT []string
	}{
		{"closed when nobody is named", v1alpha1.NetworkPolicySpec{Enabled: true}, nil, nil, nil, nil},
		{"the client port's peers by default", v1alpha1.NetworkPolicySpec{Enabled: true, Clients: []v1alpha1.NetworkPolicyPeer{team}}, nil, nil,
			[]string{"ns:team=web"}, []string{"ns:team=web"}},
		{"each its own from", v1alpha1.NetworkPolicySpec{Enabled: true, Clients: []v1alpha1.NetworkPolicyPeer{team}},
			[]v1alpha1.NetworkPolicyPeer{team}, []v1alpha1.NetworkPolicyPeer{devices},
			[]string{"ns:team=web"}, []string{"ip:203.0.113.0/24"}},
		{"from without clients", v1alpha1.NetworkPolicySpec{Enabled: true}, nil, []v1alpha1.NetworkPolicyPeer{devices},
			nil, []string{"ip:203.0.113.0/24"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(withNetworkPolicy(tc.np), withWebSocket(v1alpha1.WebSocketSpec{NoTLS: true, From: tc.ws}), withMQTT(v1alpha1.MQTTSpec{From: tc.mqtt}))
			np := policyOf(t, c)
			for _, l := range []struct {
				port int32
				want []string
			}{{8080, tc.wantWS}, {1883, tc.wantMQTT}} {
				rules := rulesOnPort(np, l.port)
				if l.want == nil {
					if len(rules) != 0 {
						t.Errorf("port %d: %d rules, want none (closed)", l.port, len(rules))
					}
					continue
				}
				if len(rules) != 1 {
					t.Fatalf("port %d: %d rules, want 1", l.port, len(rules))
				}
				var got []string
				for _, p := range rules[0].From {
					got = append(got, describePeer(p))
				}
				equal(t, "port peers", strings.Join(got, ","), strings.Join(l.want, ","))
				if len(rules[0].From) == 0 {
					t.Errorf("port %d: a rule with no peers admits everyone", l.port)
				}
			}
			// The client port is unchanged by the listeners.
			equal(t, "client port rules", len(rulesOnPort(np, render.ClientPort)), 1)
		})
	}
}

func describePeer(p networkingv1.NetworkPolicyPeer) string {
	switch {
	case p.IPBlock != nil:
		return "ip:" + p.IPBlock.CIDR
	case p.NamespaceSelector != nil && p.PodSelector == nil:
		return "ns:" + strings.TrimSuffix(mapString(p.NamespaceSelector.MatchLabels), ";")
	}
	return "other"
}

// TestListenerMeshLevels: a listener is PERMISSIVE at port level only when
// it asks (meshPermissive), and the cluster's mode stays what it was; the
// careless variant, an exception for every listener, fails "asked for
// none".
func TestListenerMeshLevels(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ws, mqtt  bool
		wantPorts []uint32
	}{
		{"asked for none", false, false, nil},
		{"websocket only", true, false, []uint32{8080}},
		{"mqtt only", false, true, []uint32{1883}},
		{"both", true, true, []uint32{1883, 8080}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(withMesh(v1alpha1.MeshMTLSStrict), withClientTLS("t"),
				withWebSocket(v1alpha1.WebSocketSpec{MeshPermissive: tc.ws}), withMQTT(v1alpha1.MQTTSpec{MeshPermissive: tc.mqtt}))
			pa := find[*securityv1.PeerAuthentication](t, renderObjects(t, c, render.Inputs{}), c.PeerAuthenticationName())
			var got []uint32
			for p, m := range pa.Spec.PortLevelMtls {
				equal(t, "port mode", m.Mode.String(), "PERMISSIVE")
				got = append(got, p)
			}
			slices.Sort(got)
			equal(t, "permissive ports", fmtPorts(got), fmtPorts(tc.wantPorts))
			equal(t, "workload mode", pa.Spec.Mtls.Mode.String(), "STRICT")
		})
	}
}

func fmtPorts(ps []uint32) string {
	var s []string
	for _, p := range ps {
		s = append(s, strconv.Itoa(int(p)))
	}
	return strings.Join(s, ",")
}

// TestListenerRestartOrReload follows nats-server's reload rules
// (server/reload.go, diffOptions): of a websocket block only the
// certificate reloads, so every field restarts; of an mqtt block
// stream_replicas reloads, the port does not. The careless variant, the
// whole mqtt block in the restart hash, fails "mqtt stream replicas
// reload"; the opposite (listeners left out of the hash) fails the
// restarts.
func TestListenerRestartOrReload(t *testing.T) {
	ws := v1alpha1.WebSocketSpec{NoTLS: true}
	mq := v1alpha1.MQTTSpec{StreamReplicas: ptr.To[int32](1)}
	base := []func(*v1alpha1.NatsCluster){withWebSocket(ws), withMQTT(mq)}
	change := func(f func(*v1alpha1.WebSocketSpec, *v1alpha1.MQTTSpec)) []func(*v1alpha1.NatsCluster) {
		w, m := ws, mq
		f(&w, &m)
		return []func(*v1alpha1.NatsCluster){withWebSocket(w), withMQTT(m)}
	}
	for _, tc := range []struct {
		name        string
		after       []func(*v1alpha1.NatsCluster)
		wantRestart bool
	}{
		{"nothing", base, false},
		{"mqtt stream replicas reload", change(func(_ *v1alpha1.WebSocketSpec, m *v1alpha1.MQTTSpec) { m.StreamReplicas = ptr.To[int32](3) }), false},
		{"mqtt stream replicas back to unset reload", change(func(_ *v1alpha1.WebSocketSpec, m *v1alpha1.MQTTSpec) { m.StreamReplicas = nil }), false},
		{"mqtt port restarts", change(func(_ *v1alpha1.WebSocketSpec, m *v1alpha1.MQTTSpec) { m.Port = 8883 }), true},
		{"websocket port restarts", change(func(w *v1alpha1.WebSocketSpec, _ *v1alpha1.MQTTSpec) { w.Port = 9090 }), true},
		{"websocket origins restart", change(func(w *v1alpha1.WebSocketSpec, _ *v1alpha1.MQTTSpec) {
			w.AllowedOrigins = []string{"https://a.example"}
		}), true},
		{"websocket compression restarts", change(func(w *v1alpha1.WebSocketSpec, _ *v1alpha1.MQTTSpec) { w.Compression = true }), true},
		{"the NetworkPolicy peers are not nats.conf", change(func(w *v1alpha1.WebSocketSpec, _ *v1alpha1.MQTTSpec) {
			w.From = []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "10.0.0.0/8"}}}
		}), false},
		{"the Ingress is not nats.conf", change(func(w *v1alpha1.WebSocketSpec, _ *v1alpha1.MQTTSpec) {
			w.Ingress = &v1alpha1.WebSocketIngress{Host: "nats.example.com", TLSSecretName: "t"}
		}), false},
		{"websocket removed restarts", []func(*v1alpha1.NatsCluster){withMQTT(mq)}, true},
		{"mqtt removed restarts", []func(*v1alpha1.NatsCluster){withWebSocket(ws)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := configHash(t, cluster(base...)), configHash(t, cluster(tc.after...))
			if restart := before != after; restart != tc.wantRestart {
				t.Errorf("hash %s -> %s: restart = %v, want %v", before, after, restart, tc.wantRestart)
			}
		})
	}
	// Without a system user (mode token) nothing reloads: the operator
	// sends reloads through the system account.
	tok := withAuthMode(v1alpha1.AuthToken)
	a := configHash(t, cluster(tok, withMQTT(mq)))
	b := configHash(t, cluster(tok, withMQTT(v1alpha1.MQTTSpec{StreamReplicas: ptr.To[int32](3)})))
	if a == b {
		t.Error("mode token: an mqtt stream replicas change must restart, as nothing can reload")
	}
}
