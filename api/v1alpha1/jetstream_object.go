package v1alpha1

import "sigs.k8s.io/controller-runtime/pkg/client"

// JetStreamFinalizer holds a JetStream resource until the operator has
// removed its server object (or been told to keep it). The installed
// admission policy adds it when the resource is created, so the operator
// need not write the resource once more to add it; the operator still adds
// it to a resource that came in without it.
const JetStreamFinalizer = "kubenats.io/jetstream"

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
