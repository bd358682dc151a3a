package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// withServerView adds to a "no responders" answer what every server of the
// client's cluster knows of the subject: a JetStream API request meets no
// responders when the server the client is connected to holds no
// subscription for it in the client's account, neither its own (the
// account's import of the system account's API) nor one a route brought
// from the server that serves it (a consumer leader's MSG.NEXT). Which
// server holds which subscriptions, and over which route, is the
// evidence. Any other error is returned as it is.
func withServerView(err error, nc *nats.Conn, account, subject string) error {
	if !errors.Is(err, nats.ErrNoResponders) {
		return err
	}
	connected := nc.ConnectedServerName()
	ns := namespaceOfURL(nc.ConnectedUrl())
	var b strings.Builder
	fmt.Fprintf(&b, "%v for %s, from %s (%s);", err, subject, connected, nc.ConnectedUrl())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var pods corev1.PodList
	if lerr := cluster.Client.List(ctx, &pods, client.InNamespace(ns)); lerr != nil {
		return fmt.Errorf("%s listing the pods of %q: %v", b.String(), ns, lerr)
	}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" {
			continue
		}
		fmt.Fprintf(&b, " %s: %s, %s;", p.Name, subscriptionsFor(p.Status.PodIP, account, subject), accountSubscriptions(p.Status.PodIP, account))
		if p.Name == connected {
			fmt.Fprintf(&b, " its routes: %s;", routesOf(p.Status.PodIP, subject))
		}
	}
	return errors.New(b.String())
}

// namespaceOfURL reads the namespace from a pod DNS URL
// (nats://<pod>.<service>.<namespace>.svc...:4222).
func namespaceOfURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return ""
	}
	labels := strings.Split(parsed.Hostname(), ".")
	if len(labels) < 3 {
		return ""
	}
	return labels[2]
}

// subscriptionsFor is which of a server's own connections (clients, its
// JetStream consumers) hold a subscription in
// account on subject or, for a subject ending in ">", under its prefix
// (filtered here: the monitor's test= takes only a literal subject).
func subscriptionsFor(ip, account, subject string) string {
	var subs struct {
		Total int `json:"total"`
		Subs  []struct {
			Subject string `json:"subject"`
			Cid     uint64 `json:"cid"`
		} `json:"subscriptions_list"`
	}
	path := "/subsz?subs=1&limit=10000&acc=" + url.QueryEscape(account)
	if err := monitor(ip, path, &subs); err != nil {
		return err.Error()
	}
	prefix, wild := strings.CutSuffix(subject, ">")
	var parts []string
	for _, s := range subs.Subs {
		if s.Subject == subject || (wild && strings.HasPrefix(s.Subject, prefix)) {
			parts = append(parts, fmt.Sprintf("%s on cid %d", s.Subject, s.Cid))
		}
	}
	return fmt.Sprintf("%d of %d subscriptions match [%s]", len(parts), subs.Total, strings.Join(parts, ", "))
}

// routesOf is a server's routes (rid, peer, pinned account, how many
// subscriptions the peer sent over it) and, per route, the subscriptions
// under prefix it holds: /subsz lists only a server's local subscriptions,
// /routez?subs=1 those its peers sent.
func routesOf(ip, subject string) string {
	var r struct {
		Routes []struct {
			Rid        uint64   `json:"rid"`
			RemoteName string   `json:"remote_name"`
			Account    string   `json:"account"`
			NumSubs    uint32   `json:"subscriptions"`
			Subs       []string `json:"subscriptions_list"`
		} `json:"routes"`
	}
	if err := monitor(ip, "/routez?subs=1", &r); err != nil {
		return err.Error()
	}
	prefix, wild := strings.CutSuffix(subject, ">")
	var b strings.Builder
	for _, route := range r.Routes {
		var held []string
		for _, s := range route.Subs {
			if s == subject || (wild && strings.Contains(s, prefix)) {
				held = append(held, s)
			}
		}
		fmt.Fprintf(&b, "[rid %d to %s, pinned %q, %d subscriptions, %d under the prefix: %s] ", route.Rid, route.RemoteName, route.Account, route.NumSubs, len(held), strings.Join(held, " "))
	}
	return b.String()
}

// accountSubscriptions is how many subscriptions the account's sublist
// holds on a server, its peers' included: set beside the routes' counts,
// it tells whether what the routes brought is in the account at all.
func accountSubscriptions(ip, account string) string {
	var a struct {
		Account struct {
			SubCnt uint32 `json:"subscriptions"`
		} `json:"account_detail"`
	}
	if err := monitor(ip, "/accountz?acc="+url.QueryEscape(account), &a); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d subscriptions in %s in all", a.Account.SubCnt, account)
}
