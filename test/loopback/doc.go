// Package loopback is a whole Kubernetes cluster on one machine, without a
// container runtime, for end-to-end tests and demos of the operator.
//
// It runs a real control plane (kube-apiserver and etcd through envtest,
// kube-controller-manager as a process beside them), so StatefulSets,
// garbage collection and claim retention behave as they do in production.
// In place of the kubelet it runs one of its own, written here: it registers
// a Node, binds pending pods to it, gives each pod its own loopback address
// (127.0.x.y, another one each time a pod of that name is created again)
// and runs the pod's `nats` container as a real nats-server process built
// for the image's version. Volumes are directories, probes are real HTTP
// requests, deletion is graceful: the preStop hook's command run as written
// in the container (prestop.go; a failing one is a FailedPreStopHook
// event), SIGTERM, then SIGKILL at the end of the grace period.
//
// What a real cluster has and this machine lacks, cluster DNS, a network
// namespace per pod and the container's own filesystem, is bridged in one
// place (rewrite.go, dns.go): the nats.conf a pod mounts is rewritten,
// inside the harness only, so that `<pod>.<headless service>` names become
// pod addresses, every listener binds the pod's address, and mount paths
// become the pod's directories. The operator renders exactly what it
// renders for a real cluster. Clients in the test process reach Service and
// pod DNS names through Cluster.Dial.
//
// The API:
//
//	c := loopback.Start(t, loopback.Options{Scheme: manager.Scheme()})
//	c.Client, c.Config         // admin access to the API server
//	c.PodIP(ns, pod)           // where a pod's server listens (4222, 6222, 8222)
//	c.Kill(ns, pod, sig)       // signal a pod's nats-server (a crash: SIGKILL)
//	c.OnTerminating(fn)        // look at a pod as its deletion begins, before its preStop hook
//	c.Dial(network, address)   // dial cluster DNS names, for NATS clients
//	c.ServerLog(ns, pod)       // what its nats-server processes wrote
//	c.Stop()                   // Start does it at the end of the test
//
// Options{CertManager: true} also runs cert-manager's real controllers
// (certmanager.go) against the cluster: Certificates are issued and renewed
// by the CA and self-signed issuers; c.CertManagerLog() is their output.
// RunCertManager runs them beside a bare envtest API server.
//
// The mesh model (mesh.go, mesh_proxy.go, mesh_sniff.go, mesh_policy.go,
// mesh_view.go, mesh_protocol.go, mesh_capture.go, mesh_push.go,
// mesh_pki.go) stands in for Istio's sidecar, which cannot run here:
//
//   - Inbound: the sidecar listens on the pod's address on every declared
//     port that istio-init's rules capture (mesh_capture.go, from the
//     traffic.sidecar.istio.io annotations); the others are forwarded to
//     the application untouched. The application listens on Mesh.AppIP,
//     a second address of the pod, which stands for the pod's localhost.
//     Each connection's mode comes from effectiveMode (Istio's precedence:
//     workload port, workload, namespace, mesh) over the policies the
//     sidecar was last pushed. The sidecar waits for the client's first
//     bytes with no timeout, as Envoy's TLS inspector does by default: a
//     TLS ClientHello offering Istio's ALPN is mTLS (client certificate of
//     the mesh CA required), anything else is plaintext, served under
//     PERMISSIVE, closed under STRICT. DISABLE passes bytes untouched. A
//     policy change closes established plaintext connections a port now
//     refuses.
//   - Outbound: through DNS. A meshed pod's hosts file (hostsView) maps the
//     pods of its namespace that a headless Service selects, as far as its
//     sidecar was told of them, to addresses of its own sidecar, one per
//     destination, where the sidecar decides each connection as istiod
//     configures Envoy (meshView.outbound): only the headless Services'
//     declared ports have listeners, with their protocol (TCP passes,
//     HTTP wants a request, undeclared is sniffed); auto mTLS is all or
//     nothing across the pods a Service selects (plaintext to all while
//     one was not injected, or under a namespace or mesh DISABLE); an
//     uncaptured or unknown destination is reached as dialed. What Istio
//     captures with iptables and this cannot: other addresses dialed by
//     IP (gossiped route URLs, ClusterIPs) and pods of other namespaces.
//   - Pushes: each change reaches each proxy after its own delay
//     (Mesh.SetPushDelay); a starting proxy gets the current view.
//   - Identities: mesh_pki.go's CA issues SPIFFE URI SANs
//     spiffe://cluster.local/ns/<ns>/sa/<serviceaccount>.
//   - Drain: stopSidecar refuses new connections at once, keeps
//     established ones for the drain duration, then closes them.
//   - Clients of the test process: Mesh.Client(ns, sa) is a meshed client
//     (nats.SetCustomDialer) that decides as a sidecar does, by its own
//     pushed view; a plain dial is a client outside the mesh.
//
// Options{Istio: true} runs it for the cluster's pods (istio.go,
// mesh_kubelet.go, mesh_pod.go, mesh_agent.go, mesh_crash.go):
//
//   - Injection is Istio's own: hack/istioinject (its own module, built by
//     hack/build-istio.sh into bin/istio) serves istio.io/istio's
//     pkg/kube/inject webhook with the configuration istioctl's default
//     profile renders, the module's injection template included; the API
//     server calls it through the MutatingWebhookConfiguration istioctl
//     installs (pods labelled sidecar.istio.io/inject=true, or in a
//     namespace labelled istio-injection=enabled), over TLS with a serving
//     certificate of the mesh CA. On this Kubernetes version it injects a
//     native sidecar (istio-proxy as an init container with restartPolicy
//     Always) after istio-init, unless the pod's
//     sidecar.istio.io/nativeSidecar annotation says "false".
//   - The kubelet gives a pod with istio-proxy a sidecar of the model: a
//     native sidecar (or a classic one with holdApplicationUntilProxyStarts)
//     before the server, a classic one about a second after it; the server
//     listens on Mesh.AppIP and reads its own hosts file (the sidecar's
//     view); istio-init and istio-validation count as done; istio-proxy is
//     reported running and ready while the sidecar is up. The rewritten
//     probes reach the agent on the pod's port 15020, which runs the
//     original probes (ISTIO_KUBE_APP_PROBERS) against the app; Envoy's
//     15021 answers /healthz/ready. On deletion a classic proxy gets SIGTERM
//     with the server and drains for terminationDrainDuration (PROXY_CONFIG,
//     or the proxy.istio.io/config annotation; 5 s by default), a native
//     one only after the server has exited.
//   - istiod's loops: Istio's CRDs (from the istio.io/api module) are
//     installed, security.istio.io/v1 PeerAuthentications are fed to
//     Mesh.SetPeerAuthentications (oldest first; one the model cannot read
//     is left out with a log line), and istio-ca-root-cert is published in
//     every namespace.
//
// The test hooks:
//
//	c.Mesh                     // the model; nil without Options.Istio
//	c.Mesh.Meshed(pod)         // the pod's sidecar runs
//	c.Mesh.AppIP(ns, pod)      // where a meshed server listens (its monitor port, from inside)
//	c.MeshDialer(ns, sa)       // Cluster.Dial as a meshed workload of the test process
//	c.Dial                     // a client outside the mesh
//	c.KillProxy(ns, pod, down) // an Envoy crash, restarted by the kubelet after down
//	c.IstioLog()               // what the injector wrote
//
// KillProxy is the failure of one proxy as it happens: the pod keeps its
// injection and tlsMode label, so peers still count it as meshed and send
// it mTLS, but nothing listens on its captured ports: every connection to
// it and from its server is refused, established ones are reset, its
// agent answers no probe (the pod turns unready), and istio-proxy reports
// CrashLoopBackOff, then a restart.
//
// New/Stop do the same without a testing.T (a TestMain, a demo);
// BuildNatsServers builds the nats-server binaries the kubelet runs;
// BuildCertManager builds cert-manager's controllers and places its CRDs.
package loopback
