package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
)

// clientSecret reads the NatsCluster's credentials Secret, as an
// application would.
func clientSecret(ctx context.Context, c client.Client, nc *v1alpha1.NatsCluster) (map[string]string, error) {
	var live v1alpha1.NatsCluster
	if err := c.Get(ctx, client.ObjectKeyFromObject(nc), &live); err != nil {
		return nil, err
	}
	if live.Status.CredentialsSecretRef == nil {
		return nil, errors.New("the NatsCluster names no credentials Secret in its status")
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: live.Status.CredentialsSecretRef.Name}, &s); err != nil {
		return nil, err
	}
	out := map[string]string{"secret": s.Name}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out, nil
}

// roundTrip connects as an application in the cluster would, with the
// ready-made URL of the credentials Secret (its Service name resolved by
// the loopback cluster) and its CA, over TLS (the connection must be, or
// the demo fails), publishes with acks to the sample stream and consumes
// through the sample consumer, acking each message.
func roundTrip(ctx context.Context, dc *demoCluster, s *v1alpha1.Stream, k *v1alpha1.Consumer) error {
	cred, err := clientSecret(ctx, dc.client, &v1alpha1.NatsCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.Spec.Cluster.Name}})
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(cred["ca.crt"])) {
		return fmt.Errorf("Secret %s has no usable ca.crt", cred["secret"])
	}
	nc, err := nats.Connect(cred["url"], nats.SetCustomDialer(jetstream.DialerFunc(dc.dial)), nats.Name("kubenats-demo"),
		nats.Secure(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}))
	if err != nil {
		return fmt.Errorf("connecting with the url and ca.crt of Secret %s: %w", cred["secret"], err)
	}
	defer nc.Close()
	state, err := nc.TLSConnectionState()
	if err != nil {
		return fmt.Errorf("the round trip's connection is not TLS: %w", err)
	}
	js, err := natsjs.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	subject := strings.TrimSuffix(s.Spec.Subjects[0], ">") + "demo"
	began := time.Now()
	for i := range roundTripCount {
		if _, err := js.Publish(ctx, subject, fmt.Appendf(nil, "order %d", i)); err != nil {
			return fmt.Errorf("publishing: %w", err)
		}
	}
	published := time.Since(began)
	cons, err := js.Consumer(ctx, k.Spec.StreamName, k.Spec.DurableName)
	if err != nil {
		return err
	}
	got := 0
	for got < roundTripCount {
		batch, err := cons.Fetch(roundTripCount-got, natsjs.FetchMaxWait(5*time.Second))
		if err != nil {
			return err
		}
		for msg := range batch.Messages() {
			if err := msg.DoubleAck(ctx); err != nil {
				return fmt.Errorf("acking: %w", err)
			}
			got++
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("fetching after %d messages: %w", got, err)
		}
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	say("round trip on %s over %s, %s verified with the Secret's ca.crt (connected to %s): %d messages published with acks in %s to %s, consumed and acked through %s in %s; ack pending now %d",
		nc.ConnectedUrlRedacted(), tls.VersionName(state.Version), state.PeerCertificates[0].Subject.CommonName, nc.ConnectedServerName(), roundTripCount, published.Round(time.Millisecond),
		s.Spec.Name, k.Spec.DurableName, (time.Since(began) - published).Round(time.Millisecond), info.NumAckPending)
	return nil
}
