package v1alpha1

import "sigs.k8s.io/controller-runtime/pkg/client"

// JetStreamObject is what the shared reconciler needs of every JetStream
// kind: where it lives, how it may be changed, and its status.
// +kubebuilder:object:generate=false
type JetStreamObject interface {
	client.Object
	GetTarget() Target
	GetLifecycle() Lifecycle
	GetJetStreamStatus() *JetStreamStatus
}

func (s *Stream) GetTarget() Target                         { return s.Spec.Target }
func (s *Stream) GetLifecycle() Lifecycle                   { return s.Spec.Lifecycle }
func (s *Stream) GetJetStreamStatus() *JetStreamStatus      { return &s.Status }
func (c *Consumer) GetTarget() Target                       { return c.Spec.Target }
func (c *Consumer) GetLifecycle() Lifecycle                 { return c.Spec.Lifecycle }
func (c *Consumer) GetJetStreamStatus() *JetStreamStatus    { return &c.Status }
func (k *KeyValue) GetTarget() Target                       { return k.Spec.Target }
func (k *KeyValue) GetLifecycle() Lifecycle                 { return k.Spec.Lifecycle }
func (k *KeyValue) GetJetStreamStatus() *JetStreamStatus    { return &k.Status }
func (o *ObjectStore) GetTarget() Target                    { return o.Spec.Target }
func (o *ObjectStore) GetLifecycle() Lifecycle              { return o.Spec.Lifecycle }
func (o *ObjectStore) GetJetStreamStatus() *JetStreamStatus { return &o.Status }
