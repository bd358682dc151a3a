package render_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/natsconf"
	"github.com/kubenats/kubenats/internal/render"
)

func withLeafnodes(l v1alpha1.LeafnodesSpec) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Leafnodes = &l }
}

func withGateway(g v1alpha1.GatewaySpec) func(*v1alpha1.NatsCluster) {
	return func(c *v1alpha1.NatsCluster) { c.Spec.Gateway = &g }
}

var (
	hubRemote = v1alpha1.LeafnodeRemote{
		Name: "hub", URLs: []string{"nats-leaf://hub.example:7422"},
		UserSecretRef: &v1alpha1.LocalSecretRef{Name: "hub-user"},
		DenyImports:   []string{"secret.>"}, DenyExports: []string{"private.*"},
	}
	credsRemote = v1alpha1.LeafnodeRemote{
		Name: "cloud", URLs: []string{"tls://cloud.example:7422"}, Account: "SYS",
		CredsSecretRef: &v1alpha1.LocalSecretRef{Name: "cloud-creds"},
		TLS:            &v1alpha1.LocalSecretRef{Name: "cloud-ca"},
	}
	accept = v1alpha1.LeafnodeAcceptSpec{
		TLS:  &v1alpha1.ClientTLSSpec{SecretName: "leaf-tls", Verify: true, HandshakeFirst: true},
		From: []v1alpha1.NetworkPolicyPeer{{IPBlock: &v1alpha1.IPBlock{CIDR: "203.0.113.0/24"}}},
	}
	gateway = v1alpha1.GatewaySpec{
		Name:      "east",
		SecretRef: v1alpha1.LocalSecretRef{Name: "gw"},
		TLS:       v1alpha1.GatewayTLSSpec{IssuerRef: &v1alpha1.IssuerRef{Name: "supercluster", Kind: "ClusterIssuer"}},
		Gateways: []v1alpha1.GatewayRemote{
			{Name: "west", ClusterRef: &v1alpha1.GatewayClusterRef{Name: "west", Namespace: "other", Replicas: 2}},
			{Name: "far", URLs: []string{"tls://far.example:7222"}},
		},
	}
)

// parsed is c's nats.conf as nats-server's parser reads it, environment
// references stood in as the config check stands them in, and the include
// directives (of files only the pod has) left out.
func parsed(t *testing.T, c *v1alpha1.NatsCluster) map[string]any {
	t.Helper()
	text := configText(t, c)
	var lines []string
	for _, line := range strings.Split(string(natsconf.ForServer([]byte(text))), "\n") {
		if !strings.HasPrefix(line, "include ") {
			lines = append(lines, line)
		}
	}
	m, err := conf.Parse(strings.Join(lines, "\n"))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return m
}

func block(t *testing.T, m map[string]any, path ...string) map[string]any {
	t.Helper()
	cur := m
	for _, k := range path {
		next, ok := cur[k].(map[string]any)
		if !ok {
			t.Fatalf("no block %v in %v", path, m)
		}
		cur = next
	}
	return cur
}

// TestLeafnodesConf: every leafnodes field reaches nats.conf, with no
// credential in it. Careless variants caught: the accept password written
// as a literal (the ConfigMap then holds it), the remote's user/password
// spliced into the URL in nats.conf, deny lists or the account dropped.
func TestLeafnodesConf(t *testing.T) {
	c := cluster(withLeafnodes(v1alpha1.LeafnodesSpec{Accept: &accept, Remotes: []v1alpha1.LeafnodeRemote{hubRemote, credsRemote}}))
	text := configText(t, c)
	if !strings.Contains(text, `include "leafnodes.conf"`) {
		t.Errorf("nats.conf does not include leafnodes.conf:\n%s", text)
	}
	l := block(t, parsed(t, c), "leafnodes")
	if l["port"] != int64(render.LeafnodePort) {
		t.Errorf("port %v", l["port"])
	}
	auth := block(t, l, "authorization")
	if auth["user"] != "leaf" || auth["account"] != render.AppAccount || auth["password"] == nil {
		t.Errorf("authorization %v (password must be $%s)", auth, render.EnvLeafnodePassword)
	}
	if !strings.Contains(text, "password: $"+render.EnvLeafnodePassword) {
		t.Errorf("leafnode password is not the environment's:\n%s", text)
	}
	tls := block(t, l, "tls")
	if tls["verify"] != true || tls["handshake_first"] != true || tls["cert_file"] != render.LeafnodesTLSDir+"/tls.crt" {
		t.Errorf("tls %v", tls)
	}
	remotes := l["remotes"].([]any)
	if len(remotes) != 2 {
		t.Fatalf("remotes %v", remotes)
	}
	hub := remotes[0].(map[string]any)
	if !strings.Contains(text, "$KUBENATS_LEAF_HUB_URL_0") || strings.Contains(text, "hub.example") {
		t.Errorf("a password remote's URL must be leafnodes.conf's variable:\n%s", text)
	}
	if hub["account"] != render.AppAccount || hub["deny_imports"].([]any)[0] != "secret.>" || hub["deny_exports"].([]any)[0] != "private.*" {
		t.Errorf("hub remote %v", hub)
	}
	cloud := remotes[1].(map[string]any)
	if cloud["account"] != "SYS" || cloud["credentials"] != render.ConfigDir+"/leaf-cloud.creds" ||
		block(t, cloud, "tls")["ca_file"] != render.ConfigDir+"/leaf-cloud-ca.crt" {
		t.Errorf("cloud remote %v", cloud)
	}
	if cloud["urls"].([]any)[0] != "tls://cloud.example:7422" {
		t.Errorf("cloud urls %v", cloud["urls"])
	}
	if !strings.Contains(text, render.MetadataLeafnodesKey) {
		t.Errorf("no leafnodes revision mark:\n%s", text)
	}
}

// TestLeafnodesFiles: leafnodes.conf carries the password URLs, the
// Secret the creds and CA, and the revision follows the Secrets' versions,
// never their values. Careless variant caught: a revision hashed from the
// password (then the same for a rotated Secret with an equal password, and
// a hash of a possibly weak password in /varz).
func TestLeafnodesFiles(t *testing.T) {
	c := cluster(withLeafnodes(v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{hubRemote, credsRemote}}))
	secrets := map[string]render.RemoteSecrets{
		"hub":   {User: "edge", Password: "p@ss:w/rd", Version: "u1/1"},
		"cloud": {Creds: "-----BEGIN NATS USER JWT-----\nx\n", CA: "CA PEM", Version: "u2/7"},
	}
	data, rev, err := render.LeafnodesFiles(c, secrets)
	if err != nil {
		t.Fatal(err)
	}
	vars, err := conf.Parse(data[render.LeafnodesConfKey])
	if err != nil {
		t.Fatal(err)
	}
	if got := vars["KUBENATS_LEAF_HUB_URL_0"]; got != "nats-leaf://edge:p%40ss%3Aw%2Frd@hub.example:7422" {
		t.Errorf("hub URL %q", got)
	}
	if vars[render.EnvLeafnodesRevision] != rev {
		t.Errorf("revision %v, want %s", vars[render.EnvLeafnodesRevision], rev)
	}
	if data["leaf-cloud.creds"] != secrets["cloud"].Creds || data["leaf-cloud-ca.crt"] != "CA PEM" {
		t.Errorf("files %v", data)
	}
	rotated := secrets["hub"]
	rotated.Version = "u1/2"
	secrets["hub"] = rotated
	if _, rev2, _ := render.LeafnodesFiles(c, secrets); rev2 == rev {
		t.Error("a new Secret version keeps the revision: the servers would not be reloaded")
	}
	rotated.Password, rotated.Version = "other", "u1/1"
	secrets["hub"] = rotated
	if _, rev3, _ := render.LeafnodesFiles(c, secrets); rev3 != rev {
		t.Error("the revision depends on the password's value")
	}
}

// TestLeafnodeRemotesReloadAcceptRestarts: the restart hash ignores the
// remotes (nats-server 2.14+ reloads them) but not the listener. Careless
// variants caught: remotes in the hash (every remote change restarts), the
// whole leafnodes block out of it (a new port would never open).
func TestLeafnodeRemotesReloadAcceptRestarts(t *testing.T) {
	base := configHash(t, cluster(withLeafnodes(v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{hubRemote}})))
	changed := hubRemote
	changed.URLs = []string{"nats-leaf://hub2.example:7422"}
	if h := configHash(t, cluster(withLeafnodes(v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{changed, credsRemote}}))); h != base {
		t.Error("a remote change restarts the servers")
	}
	if h := configHash(t, cluster(withLeafnodes(v1alpha1.LeafnodesSpec{Accept: &accept, Remotes: []v1alpha1.LeafnodeRemote{hubRemote}}))); h == base {
		t.Error("opening the leafnode listener does not restart the servers")
	}
	// Without a system user nothing reloads: the remotes restart (a
	// remote whose URLs are variables restarts through the credentials
	// hash, the controller's).
	moved := credsRemote
	moved.URLs = []string{"tls://cloud2.example:7422"}
	tok := configHash(t, cluster(withAuthMode(v1alpha1.AuthToken), withLeafnodes(v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{credsRemote}})))
	if h := configHash(t, cluster(withAuthMode(v1alpha1.AuthToken), withLeafnodes(v1alpha1.LeafnodesSpec{Remotes: []v1alpha1.LeafnodeRemote{moved}}))); h == tok {
		t.Error("mode token: a remote change neither reloads nor restarts")
	}
}

// TestGatewayConf: the gateway block, the cluster named after the
// gateway (nats-server requires it), and the URLs by reference, one per
// server of the referenced cluster, by the DNS names its certificate
// carries. Careless variants caught: the gateway name left off the
// cluster block (nats-server refuses to start), URLs with the password in
// nats.conf, references dialed by the client Service (not in the
// certificate, and one server only).
func TestGatewayConf(t *testing.T) {
	c := cluster(withGateway(gateway))
	text := configText(t, c)
	m := parsed(t, c)
	if block(t, m, "cluster")["name"] != "east" {
		t.Errorf("cluster name %v, want the gateway name", block(t, m, "cluster")["name"])
	}
	g := block(t, m, "gateway")
	if g["name"] != "east" || g["port"] != int64(render.GatewayPort) {
		t.Errorf("gateway %v", g)
	}
	if tls := block(t, g, "tls"); tls["verify"] != true || tls["ca_file"] != render.GatewayTLSDir+"/ca.crt" {
		t.Errorf("gateway tls %v", tls)
	}
	for _, want := range []string{"user: $" + render.EnvGatewayUser, "password: $" + render.EnvGatewayPassword, "urls: $NATS_GATEWAY_0_URLS", "urls: $NATS_GATEWAY_1_URLS", "advertise: $" + render.EnvGatewayAdvertise} {
		if !strings.Contains(text, want) {
			t.Errorf("nats.conf lacks %q:\n%s", want, text)
		}
	}
	data, err := render.GatewaysData(c, "gw", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	want := `["nats://gw:s3cret@west-0.west-headless.other.svc:7222", "nats://gw:s3cret@west-1.west-headless.other.svc:7222"]`
	if data["urls-0"] != want || data["urls-1"] != `["tls://gw:s3cret@far.example:7222"]` {
		t.Errorf("gateway URLs %v", data)
	}
	if strings.Contains(text, "s3cret") {
		t.Error("a gateway password is in nats.conf")
	}
}

// TestTopologyPodAndServices: ports (with appProtocol) on the right
// Services, container ports, the environment from the right Secrets, the
// certificate volumes, the leafnodes Secret projected beside nats.conf.
func TestTopologyPodAndServices(t *testing.T) {
	c := cluster(withLeafnodes(v1alpha1.LeafnodesSpec{Accept: &accept, Remotes: []v1alpha1.LeafnodeRemote{hubRemote}}), withGateway(gateway))
	objs := renderObjects(t, c, render.Inputs{})
	ports := func(svc *corev1.Service) map[string]string {
		out := map[string]string{}
		for _, p := range svc.Spec.Ports {
			out[p.Name] = *p.AppProtocol
		}
		return out
	}
	client := ports(find[*corev1.Service](t, objs, "demo"))
	headless := ports(find[*corev1.Service](t, objs, "demo-headless"))
	if client["leafnodes"] != "tls" || headless["leafnodes"] != "tls" {
		t.Errorf("leafnodes port (handshake first: tls): client %v, headless %v", client, headless)
	}
	if headless["gateway"] != "tls" {
		t.Errorf("gateway port on the headless Service: %v", headless)
	}
	if _, ok := client["gateway"]; ok {
		t.Error("gateway port on the client Service")
	}
	sts := statefulSetOf(t, c, render.Inputs{})
	ctr := containerNamed(t, sts.Spec.Template.Spec, render.ServerContainerName)
	names := map[string]int32{}
	for _, p := range ctr.Ports {
		names[p.Name] = p.ContainerPort
	}
	if names["leafnodes"] != render.LeafnodePort || names["gateway"] != render.GatewayPort {
		t.Errorf("container ports %v", names)
	}
	env := secretEnv(ctr)
	for name, want := range map[string]secretRef{
		render.EnvLeafnodePassword: {"demo-leafnodes-auth", "password"},
		render.EnvGatewayUser:      {"gw", "user"},
		render.EnvGatewayPassword:  {"gw", "password"},
		"NATS_GATEWAY_0_URLS":      {"demo-gateways", "urls-0"},
	} {
		if env[name] != want {
			t.Errorf("env %s: %v, want %v", name, env[name], want)
		}
	}
	vols := map[string]string{}
	var projected []string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			vols[v.Secret.SecretName] = v.Name
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					projected = append(projected, s.Secret.Name)
				}
			}
		}
	}
	if vols["leaf-tls"] == "" || vols["demo-gateway-tls"] == "" {
		t.Errorf("certificate volumes %v", vols)
	}
	if !strings.Contains(strings.Join(projected, ","), "demo-leafnodes") {
		t.Errorf("demo-leafnodes is not projected beside nats.conf: %v", projected)
	}
	var certs []string
	for _, o := range objs {
		if o.GetObjectKind().GroupVersionKind().Kind == render.CertificateKind {
			certs = append(certs, o.GetName())
		}
	}
	if !strings.Contains(strings.Join(certs, ","), "demo-gateway") {
		t.Errorf("no gateway Certificate: %v", certs)
	}
}

// TestTopologyNetworkPolicy: the leafnode port admits accept.from, the
// gateway port the referenced members and gateway.from, and a port with
// nobody listed gets no rule. Careless variant caught: a rule with empty
// from for an unlisted port, which admits everyone.
func TestTopologyNetworkPolicy(t *testing.T) {
	open := accept
	open.From = nil
	c := cluster(func(c *v1alpha1.NatsCluster) { c.Spec.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Enabled: true} },
		withLeafnodes(v1alpha1.LeafnodesSpec{Accept: &open}), withGateway(gateway))
	np, err := render.NetworkPolicy(c)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[int32][]networkingv1.NetworkPolicyPeer{}
	for _, r := range np.Spec.Ingress {
		rules[r.Ports[0].Port.IntVal] = r.From
	}
	if _, ok := rules[render.LeafnodePort]; ok {
		t.Errorf("leafnode port has a rule with nobody listed: %v", rules[render.LeafnodePort])
	}
	gw := rules[render.GatewayPort]
	if len(gw) != 1 || gw[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "other" ||
		gw[0].PodSelector.MatchLabels["app.kubernetes.io/instance"] != "west" {
		t.Errorf("gateway peers %+v", gw)
	}
	c.Spec.Leafnodes.Accept = &accept
	np, _ = render.NetworkPolicy(c)
	for _, r := range np.Spec.Ingress {
		if r.Ports[0].Port.IntVal == render.LeafnodePort && (len(r.From) != 1 || r.From[0].IPBlock.CIDR != "203.0.113.0/24") {
			t.Errorf("leafnode peers %+v", r.From)
		}
	}
}

// TestTopologyMeshPolicy: leafnode and gateway ports are DISABLE in the
// PeerAuthentication. Careless variant caught: leaving them to the
// workload's STRICT (edge servers without a sidecar refused) or
// PERMISSIVE (a server-first peer hangs).
func TestTopologyMeshPolicy(t *testing.T) {
	c := cluster(func(c *v1alpha1.NatsCluster) { c.Spec.Mesh = &v1alpha1.MeshSpec{Istio: &v1alpha1.IstioMeshSpec{}} },
		withLeafnodes(v1alpha1.LeafnodesSpec{Accept: &accept}), withGateway(gateway))
	pa := render.PeerAuthentication(c.WithDefaults(), render.MeshStage{Sidecars: true, Policy: render.MeshPolicyStrict})
	for _, p := range []uint32{render.LeafnodePort, render.GatewayPort} {
		if l := pa.Spec.PortLevelMtls[p]; l == nil || l.Mode.String() != "DISABLE" {
			t.Errorf("port %d: %v", p, l)
		}
	}
}

// TestTopologySecrets: the generated leafnode password, leafnodes.conf and
// the gateway URLs are Secrets, never ConfigMap data.
func TestTopologySecrets(t *testing.T) {
	c := cluster(withLeafnodes(v1alpha1.LeafnodesSpec{Accept: &accept, Remotes: []v1alpha1.LeafnodeRemote{hubRemote}}), withGateway(gateway)).WithDefaults()
	cred := render.Credentials{Client: "c", System: "s", Route: "r", Topology: render.TopologyCredentials{
		LeafnodePassword: "leafPw1", GatewayUser: "gw", GatewayPassword: "gwPw1",
		Remotes: map[string]render.RemoteSecrets{"hub": {User: "u", Password: "hubPw1", Version: "1"}},
	}}
	got := map[string]map[string]string{}
	for _, s := range render.Secrets(c, cred) {
		got[s.Name] = s.StringData
	}
	if got["demo-leafnodes-auth"]["password"] != "leafPw1" {
		t.Errorf("leafnodes-auth %v", got["demo-leafnodes-auth"])
	}
	if !strings.Contains(got["demo-leafnodes"][render.LeafnodesConfKey], "hubPw1") {
		t.Errorf("leafnodes.conf %v", got["demo-leafnodes"])
	}
	if !strings.Contains(got["demo-gateways"]["urls-0"], "gwPw1") {
		t.Errorf("gateways %v", got["demo-gateways"])
	}
	objs := renderObjects(t, c, render.Inputs{})
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			for _, v := range cm.Data {
				for _, pw := range []string{"leafPw1", "hubPw1", "gwPw1"} {
					if strings.Contains(v, pw) {
						t.Errorf("ConfigMap %s holds a password", cm.Name)
					}
				}
			}
		}
	}
}
