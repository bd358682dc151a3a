package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// writeKubeconfig writes an admin kubeconfig for the API server.
func writeKubeconfig(cfg *rest.Config, path string) error {
	ca, err := dataOrFile(cfg.CAData, cfg.CAFile)
	if err != nil {
		return err
	}
	cert, err := dataOrFile(cfg.CertData, cfg.CertFile)
	if err != nil {
		return err
	}
	key, err := dataOrFile(cfg.KeyData, cfg.KeyFile)
	if err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["loopback"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key, Token: cfg.BearerToken}
	kc.Contexts["loopback"] = &clientcmdapi.Context{Cluster: "loopback", AuthInfo: "admin", Namespace: ns}
	kc.CurrentContext = "loopback"
	return clientcmd.WriteToFile(*kc, path)
}

func dataOrFile(data []byte, file string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	return os.ReadFile(file)
}

// howToConnect prints the servers' addresses, the credentials, the CA and
// the kubeconfig.
func howToConnect(ctx context.Context, dc *demoCluster, nc *v1alpha1.NatsCluster, kubeconfig string) error {
	cred, err := clientSecret(ctx, dc.client, nc)
	if err != nil {
		return err
	}
	caFile := filepath.Join(filepath.Dir(kubeconfig), "ca.crt")
	if err := os.WriteFile(caFile, []byte(cred["ca.crt"]), 0o600); err != nil {
		return err
	}
	var urls []string
	for i := range nc.Spec.ReplicaCount() {
		urls = append(urls, "tls://"+net.JoinHostPort(dc.podIP(ctx, ns, fmt.Sprintf("%s-%d", nc.Name, i)), "4222"))
	}
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(urls[0], "tls://"))
	fmt.Printf(`
Connect from this machine (%s):
  servers:   %s
  user:      %s
  password:  %s
             (Secret %s/%s, keys user and password; key url is what applications in the cluster use:
              %s)
  TLS:       clients must speak it; trust %s (the Secret's ca.crt). The certificate
             names %s-0.%s.%s.svc and its siblings, not these addresses: a client
             here verifies under that name (the round trip above did, through the
             cluster's resolver).
  monitor:   http://%s/varz  (also /jsz, /routez, /healthz)

The Kubernetes API (admin), for kubectl or any client:
  export KUBECONFIG=%s
  kubectl get natsclusters,streams,consumers,pods
  kubectl apply -f config/samples/natscluster-development.yaml
  (the files go away with the demo)

`, dc.where, strings.Join(urls, ","), cred["user"], cred["password"], ns, cred["secret"], redactURL(cred["url"]),
		caFile, nc.Name, nc.HeadlessServiceName(), ns,
		net.JoinHostPort(host, "8222"), kubeconfig)
	return nil
}

// redactURL hides the password of a nats:// URL.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	userinfo, host, hasAt := strings.Cut(rest, "@")
	if !ok || !hasAt {
		return u
	}
	user, _, _ := strings.Cut(userinfo, ":")
	return scheme + "://" + user + ":***@" + host
}
