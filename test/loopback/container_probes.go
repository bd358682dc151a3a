package loopback

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The probers of a run report verdicts to the worker's loop, which acts on
// them here, as the kubelet's prober manager does.

// natsStarted: the startup probe passed; readiness and liveness begin.
func (w *podWorker) natsStarted(ctx context.Context, run *containerRun, c *corev1.Container) {
	w.nats.started = true
	if c.ReadinessProbe != nil {
		w.startProber(ctx, run, c, readinessProbe, c.ReadinessProbe)
	} else {
		w.nats.ready = true
	}
	if c.LivenessProbe != nil {
		w.startProber(ctx, run, c, livenessProbe, c.LivenessProbe)
	}
}

func (w *podWorker) startProber(ctx context.Context, run *containerRun, c *corev1.Container, kind probeKind, probe *corev1.Probe) {
	p := &prober{kind: kind, probe: probe, ip: w.ip, ports: c.Ports}
	p.report = func(ok bool, msg string) bool {
		return w.send(ctx, func() { w.probeVerdict(ctx, run, c, kind, ok, msg) })
	}
	if kind == startupProbe {
		p.answered = func() {
			w.send(ctx, func() {
				if w.nats.run == run {
					w.nats.answering = true
				}
			})
		}
	}
	go p.run(ctx)
}

// probeVerdict acts on a probe's changed verdict for the run it probed.
func (w *podWorker) probeVerdict(ctx context.Context, run *containerRun, c *corev1.Container, kind probeKind, ok bool, msg string) {
	n := &w.nats
	if n.run != run || n.stopping {
		return
	}
	w.k.logf("%s: %s probe %s %s", w.key, kind, map[bool]string{true: "passed", false: "failed"}[ok], msg)
	switch {
	case kind == startupProbe && ok:
		w.natsStarted(ctx, run, c)
	case kind == readinessProbe:
		n.ready = ok
	case !ok: // startup or liveness: the kubelet restarts the container
		n.stop(w, msg, time.Duration(deletionGrace(w.pod))*time.Second, time.Now())
	}
}
