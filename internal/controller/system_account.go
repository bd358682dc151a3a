package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/render"
)

// systemRequest sends a JetStream API request as the operator's system
// account user, to the servers at the pods' addresses. Only the system
// account may move replicas and remove peers; from another account such a
// request gets no answer at all.
func systemRequest(ctx context.Context, pods []corev1.Pod, password, subject string, body any) error {
	nc, err := connectSystem(pods, password)
	if err != nil {
		return err
	}
	defer nc.Close()
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg, err := nc.RequestWithContext(ctx, subject, payload)
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	var resp struct {
		Error *struct {
			Code        int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("%s: %s (error code %d)", subject, resp.Error.Description, resp.Error.Code)
	}
	return nil
}

// connectSystem connects as the operator's system account user to the
// servers at the pods' addresses. The connection is short-lived: these
// requests are rare (rollouts, scale-down), so no pool is worth keeping.
func connectSystem(pods []corev1.Pod, password string) (*nats.Conn, error) {
	var urls []string
	for i := range pods {
		if ip := pods[i].Status.PodIP; ip != "" && pods[i].DeletionTimestamp.IsZero() {
			urls = append(urls, "nats://"+net.JoinHostPort(ip, strconv.Itoa(render.ClientPort)))
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("no server to connect to")
	}
	// The servers run the image spec.image names: the guard caps what they
	// may send.
	opts := append(jetstream.GuardOptions(nil), nats.UserInfo(render.SystemUser, password),
		nats.Name("kubenats-system"), nats.NoReconnect(), nats.Timeout(3*time.Second))
	nc, err := nats.Connect(strings.Join(urls, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting as the system user: %w", err)
	}
	return nc, nil
}

// systemPassword is the operator's own system user password, from the
// Secret it generated (cached: it carries kubenats' label).
func (r *NatsClusterReconciler) systemPassword(ctx context.Context, c *v1alpha1.NatsCluster) (string, error) {
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: render.SystemSecretName(c)}, &s); err != nil {
		return "", err
	}
	return string(s.Data[render.PasswordKey]), nil
}
