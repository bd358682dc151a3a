package admission

import (
	"context"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// InstallWebhook creates the ValidatingWebhookConfiguration of
// config/webhook as it ships, except for how the API server reaches the
// operator: a test control plane has no Service network, so each webhook
// is sent to url (the in-process operator's listener) instead of the
// kubenats-webhook Service. The CA bundle stays empty, as shipped: the
// operator writes it.
func InstallWebhook(ctx context.Context, c client.Client, root, url string) error {
	data, err := os.ReadFile(filepath.Join(root, "config", "webhook", "validating_webhook.yaml"))
	if err != nil {
		return err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := utilyaml.Unmarshal(data, &vwc); err != nil {
		return err
	}
	for i := range vwc.Webhooks {
		SendTo(&vwc.Webhooks[i].ClientConfig, url, "")
	}
	return c.Create(ctx, &vwc)
}

// SendTo points a webhook's client config at base instead of its Service:
// a test control plane has no Service network. The path stays the
// Service's, or is defaultPath when it names none.
func SendTo(cc *admissionregistrationv1.WebhookClientConfig, base, defaultPath string) {
	path := defaultPath
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	u := base + path
	cc.Service, cc.URL = nil, &u
}
