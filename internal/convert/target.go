package convert

import (
	"fmt"
	"regexp"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// serverURL is what kubenats takes in connection.servers (the CRD's own
// pattern): no credentials, no path.
var serverURL = regexp.MustCompile(`^(nats|tls)://[^\s@,/]+$`)

// targetOf is where obj lives in kubenats terms: the connection of the
// Account it names, the servers it names, or the default of o, NACK's
// order.
func targetOf(obj nackObject, accounts map[string]v1alpha1.Connection, o Options) (v1alpha1.Target, []Loss, error) {
	var lost []Loss
	domain, _ := obj.Spec["jsDomain"].(string)
	servers, badServers := urls(obj.Spec["servers"])
	for _, s := range badServers {
		lost = append(lost, Loss{obj.id(), "spec.servers", fmt.Sprintf(
			"%q: kubenats takes nats:// or tls:// URLs without credentials or a path; put credentials in a Secret", s)})
	}
	if account, _ := obj.Spec["account"].(string); account != "" {
		conn, ok := accounts[obj.Metadata.Namespace+"/"+account]
		if !ok {
			return v1alpha1.Target{}, nil, fmt.Errorf("spec.account names Account %q, which is not in the input: convert it with the resources that name it", account)
		}
		if len(servers) > 0 {
			lost = append(lost, Loss{obj.id(), "spec.servers", "the Account's servers apply, as they do in NACK"})
		}
		if domain != "" {
			conn.JSDomain = domain
		}
		return v1alpha1.Target{Connection: &conn}, lost, nil
	}
	if len(servers) > 0 {
		return v1alpha1.Target{Connection: &v1alpha1.Connection{Servers: servers, JSDomain: domain}}, lost, nil
	}
	if len(badServers) > 0 {
		return v1alpha1.Target{}, nil, fmt.Errorf("spec.servers: no URL kubenats can take")
	}
	switch {
	case o.Cluster != nil:
		if domain != "" {
			lost = append(lost, Loss{obj.id(), "spec.jsDomain", "the NatsCluster's own JetStream domain applies"})
		}
		ref := *o.Cluster
		return v1alpha1.Target{Cluster: &ref}, lost, nil
	case len(o.Servers) > 0:
		return v1alpha1.Target{Connection: &v1alpha1.Connection{Servers: o.Servers, JSDomain: domain}}, lost, nil
	}
	return v1alpha1.Target{}, nil, fmt.Errorf("names neither servers nor an account, and no default was given (NACK's --servers): say where it lives with --cluster or --server")
}

// urls splits a servers list into the URLs kubenats takes and the others.
func urls(v any) (good, bad []string) {
	list, _ := v.([]any)
	for _, item := range list {
		s, _ := item.(string)
		if serverURL.MatchString(s) {
			good = append(good, s)
		} else {
			bad = append(bad, fmt.Sprint(item))
		}
	}
	return good, bad
}
