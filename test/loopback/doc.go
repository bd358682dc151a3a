// Package loopback is a whole Kubernetes cluster on one machine, without a
// container runtime, for end-to-end tests and demos of the operator.
//
// It runs a real control plane (kube-apiserver and etcd through envtest,
// kube-controller-manager as a process beside them), so StatefulSets,
// garbage collection and claim retention behave as they do in production.
// In place of the kubelet it runs one of its own, written here: it registers
// a Node, binds pending pods to it, gives each pod its own loopback address
// (127.0.x.y) and runs the pod's `nats` container as a real nats-server
// process built for the image's version. Volumes are directories, probes are
// real HTTP requests, deletion is graceful (lame duck, then SIGKILL at the
// end of the grace period).
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
//	c.Dial(network, address)   // dial cluster DNS names, for NATS clients
//	c.ServerLog(ns, pod)       // what its nats-server processes wrote
//	c.Stop()                   // Start does it at the end of the test
//
// Options{CertManager: true} also runs cert-manager's real controllers
// (certmanager.go) against the cluster: Certificates are issued and renewed
// by the CA and self-signed issuers; c.CertManagerLog() is their output.
// RunCertManager runs them beside a bare envtest API server.
//
// New/Stop do the same without a testing.T (a TestMain, a demo);
// BuildNatsServers builds the nats-server binaries the kubelet runs;
// BuildCertManager builds cert-manager's controllers and places its CRDs.
package loopback
