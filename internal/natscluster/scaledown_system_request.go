package natscluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubenats/kubenats/internal/jetstream"
	"github.com/kubenats/kubenats/internal/natsmon"
	"github.com/kubenats/kubenats/internal/servers"
)

// systemRequest sends a JetStream API request as the operator's system
// account user, to the servers at the pods' addresses. Only the system
// account may move replicas and remove peers; from another account such a
// request gets no answer at all.
func systemRequest(ctx context.Context, pods []corev1.Pod, a servers.Access, subject string, body any) error {
	nc, err := a.Connect(pods, jetstream.MaxSystemAnswer)
	if err != nil {
		return err
	}
	defer nc.Close()
	return apiRequest(ctx, nc, subject, body)
}

// apiRequest sends one JetStream API request on nc and reads the error
// the server answers, if any.
func apiRequest(ctx context.Context, nc *nats.Conn, subject string, body any) error {
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
		// The description is the server's text: bounded and made printable
		// before it reaches a log or the status.
		return fmt.Errorf("%s: %s (error code %d)", subject, natsmon.Shown(resp.Error.Description), resp.Error.Code)
	}
	return nil
}
