package jetstream

import (
	"fmt"
	"time"

	js "github.com/nats-io/nats.go/jetstream"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// defaultAckWait is the CRD default of spec.ackWait and the server's own.
const defaultAckWait = 30 * time.Second

// ConsumerConfig translates a Consumer spec into the config sent to the
// server. The durable name is both Durable and Name. Every field is sent,
// zero included; empty fields with a CRD default get that default (ack
// policy explicit, ack wait 30s, deliver all, replay instant), so a spec
// built in Go never yields ack none with a 1ns ack wait.
//
// With ack policy flow_control no ack wait is sent: the server refuses one
// there, and the CRD defaults ackWait for every consumer.
func ConsumerConfig(s *v1alpha1.ConsumerSpec) (js.ConsumerConfig, error) {
	var d decoder
	c := js.ConsumerConfig{
		Name:               s.DurableName,
		Durable:            s.DurableName,
		Description:        s.Description,
		DeliverPolicy:      deliverPolicyEnum.toServer(&d, s.DeliverPolicy),
		OptStartSeq:        s.OptStartSeq,
		OptStartTime:       timeToServer(s.OptStartTime),
		AckPolicy:          ackPolicyEnum.toServer(&d, s.AckPolicy),
		AckWait:            d.durationOr("spec.ackWait", s.AckWait, defaultAckWait),
		MaxDeliver:         s.MaxDeliver,
		FilterSubject:      s.FilterSubject,
		ReplayPolicy:       replayPolicyEnum.toServer(&d, s.ReplayPolicy),
		RateLimit:          s.RateLimitBps,
		SampleFrequency:    s.SampleFreq,
		MaxWaiting:         s.MaxWaiting,
		MaxAckPending:      s.MaxAckPending,
		HeadersOnly:        s.HeadersOnly,
		MaxRequestBatch:    s.MaxRequestBatch,
		MaxRequestExpires:  d.duration("spec.maxRequestExpires", s.MaxRequestExpires),
		MaxRequestMaxBytes: s.MaxRequestMaxBytes,
		InactiveThreshold:  d.duration("spec.inactiveThreshold", s.InactiveThreshold),
		Replicas:           s.Replicas,
		MemoryStorage:      s.MemStorage,
		FilterSubjects:     cloneStrings(s.FilterSubjects),
		Metadata:           cloneMetadata(s.Metadata),
		PriorityPolicy:     priorityPolicyEnum.toServer(&d, s.PriorityPolicy),
		PinnedTTL:          d.duration("spec.priorityTimeout", s.PriorityTimeout),
		PriorityGroups:     cloneStrings(s.PriorityGroups),
		DeliverSubject:     s.DeliverSubject,
		DeliverGroup:       s.DeliverGroup,
		FlowControl:        s.FlowControl,
		IdleHeartbeat:      d.duration("spec.heartbeatInterval", s.HeartbeatInterval),
		PauseUntil:         timeToServer(s.PauseUntil),
	}
	if c.AckPolicy == js.AckFlowControlPolicy {
		c.AckWait = 0
	}
	if len(s.Backoff) > 0 {
		c.BackOff = make([]time.Duration, len(s.Backoff))
		for i, b := range s.Backoff {
			c.BackOff[i] = d.duration(fmt.Sprintf("spec.backoff[%d]", i), b)
		}
	}
	if err := d.err(); err != nil {
		return js.ConsumerConfig{}, err
	}
	return c, nil
}

// ConsumerSpecFrom translates a server consumer config into a spec of the
// consumer on stream. The durable name is Durable, or Name when the
// consumer has no durable name. Target and Lifecycle are left zero.
func ConsumerSpecFrom(c js.ConsumerConfig, stream string) v1alpha1.ConsumerSpec {
	s := v1alpha1.ConsumerSpec{
		StreamName:         stream,
		DurableName:        c.Durable,
		Description:        c.Description,
		DeliverPolicy:      deliverPolicyEnum.toSpec(c.DeliverPolicy),
		OptStartSeq:        c.OptStartSeq,
		OptStartTime:       timeToSpec(c.OptStartTime),
		AckPolicy:          ackPolicyEnum.toSpec(c.AckPolicy),
		AckWait:            formatDefaultedDuration(c.AckWait),
		MaxDeliver:         c.MaxDeliver,
		FilterSubject:      c.FilterSubject,
		FilterSubjects:     cloneStrings(c.FilterSubjects),
		ReplayPolicy:       replayPolicyEnum.toSpec(c.ReplayPolicy),
		RateLimitBps:       c.RateLimit,
		SampleFreq:         c.SampleFrequency,
		MaxWaiting:         c.MaxWaiting,
		MaxAckPending:      c.MaxAckPending,
		HeadersOnly:        c.HeadersOnly,
		MaxRequestBatch:    c.MaxRequestBatch,
		MaxRequestExpires:  formatDuration(c.MaxRequestExpires),
		MaxRequestMaxBytes: c.MaxRequestMaxBytes,
		InactiveThreshold:  formatDuration(c.InactiveThreshold),
		Replicas:           c.Replicas,
		MemStorage:         c.MemoryStorage,
		Metadata:           cloneMetadata(c.Metadata),
		PriorityPolicy:     priorityPolicyEnum.toSpec(c.PriorityPolicy),
		PriorityTimeout:    formatDuration(c.PinnedTTL),
		PriorityGroups:     cloneStrings(c.PriorityGroups),
		DeliverSubject:     c.DeliverSubject,
		DeliverGroup:       c.DeliverGroup,
		FlowControl:        c.FlowControl,
		HeartbeatInterval:  formatDuration(c.IdleHeartbeat),
		PauseUntil:         timeToSpec(c.PauseUntil),
	}
	if s.DurableName == "" {
		s.DurableName = c.Name
	}
	if len(c.BackOff) > 0 {
		s.Backoff = make([]v1alpha1.Duration, len(c.BackOff))
		for i, b := range c.BackOff {
			s.Backoff[i] = formatDefaultedDuration(b)
		}
	}
	return s
}
