package loopback

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// natsContainerName is the one container run as a process; any other
// container is reported running without running. Nothing here signals the
// server on a config change: the operator reloads it itself.
const natsContainerName = "nats"

var errNotRunning = errors.New("the nats container is not running")

// natsContainer is the state of the pod's nats container across its runs.
type natsContainer struct {
	run      *containerRun // nil while not running
	runs     int           // runs started, numbering them
	restarts int32
	started  bool // the startup probe passed (or there is none)
	ready    bool // the readiness probe passes (or there is none)
	imageID  string
	waiting  *corev1.ContainerStateWaiting    // why it is not running
	last     *corev1.ContainerStateTerminated // how the last run ended
	// notBefore is the end of the restart back-off.
	notBefore time.Time
	backoff   time.Duration
	// pullBackoff is the image pull back-off, zero until a pull fails.
	pullBackoff time.Duration
	// answering: the server answered its startup probe, passing or not.
	answering bool
	// stopping is set from the first stop signal to the exit; killAt is
	// when the run gets SIGKILL (zero once sent).
	stopping bool
	killAt   time.Time
	// hookRunning: the preStop hook of the stopping run has not ended.
	hookRunning bool
	// hookPending: a preStop hook has not ended, even if the container
	// exited meanwhile: the kubelet finishes a termination only once the
	// hook's exec returned (killContainer waits for executePreStopHook).
	hookPending bool
}

// containerRun is one process of the container, and what a process
// exec'd into the container (the preStop hook) sees: the image's binary,
// the environment, the working directory and the mounts.
type containerRun struct {
	id     int
	proc   *process
	cancel context.CancelFunc // ends its probers

	binary  string
	env     []string
	workDir string
	mounts  []mount
}

func (n *natsContainer) waitingFor(reason, message string) {
	n.waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: message}
}

// Restart back-off: shorter than the kubelet's (10 s doubling to 5 min) so
// that tests of a crashing server stay short; reset after a minute of
// running, as the kubelet resets after ten.
const (
	firstBackoff = time.Second
	maxBackoff   = 10 * time.Second
	stableRun    = time.Minute
)

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// syncContainer brings the pod's volumes up to date (late, as a kubelet
// does: volume_refresh.go) and starts the server when it should run. It
// returns when to look again (zero: on the next event).
func (w *podWorker) syncContainer(ctx context.Context, now time.Time) time.Time {
	c := findContainer(w.pod, natsContainerName)
	if c == nil {
		return time.Time{}
	}
	retry := now.Add(time.Second)
	dirs, err := w.volumeDirs(w.pod)
	if err != nil {
		w.notStarted("ContainerCreating", err)
		return retry
	}
	mounts, err := containerMounts(c, dirs)
	if err != nil {
		w.notStarted("CreateContainerError", err)
		return retry
	}
	env, envErr := containerEnv(w.podWithIP(), c, w.k)
	command, args := commandLine(c, env, mounts)
	configFile := configArg(args)
	refresh, err := w.syncVolumes(w.pod, dirs, c, now, func(path string, data []byte) []byte {
		return w.rewriteConfig(path, data, mounts, configFile)
	})
	if err != nil {
		w.notStarted("ContainerCreating", err)
		return retry
	}
	w.sandboxReady = true
	n := &w.nats
	switch {
	case n.run != nil:
		if n.stopping {
			if n.killDue(now) {
				n.run.proc.kill()
				n.killAt = time.Time{}
				return refresh
			}
			return earliest(n.wakeForKill(), refresh)
		}
		return refresh
	case now.Before(n.notBefore):
		return n.notBefore
	case envErr != nil:
		w.notStarted("CreateContainerConfigError", envErr)
		return retry
	}
	if !w.appMayStart() {
		w.nats.waitingFor("PodInitializing", "waiting for istio-proxy")
		return retry
	}
	if err := w.startNats(ctx, c, command, args, env, mounts); err != nil {
		return retry
	}
	return refresh
}

// earliest is the sooner of two wake times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// notStarted records why the container does not run, when it does not.
func (w *podWorker) notStarted(reason string, err error) {
	if w.nats.run == nil {
		w.nats.waitingFor(reason, err.Error())
	}
	w.k.logf("%s: %s: %v", w.key, reason, err)
}

// podWithIP is the pod as the downward API sees it once it has an address.
func (w *podWorker) podWithIP() *corev1.Pod {
	p := w.pod.DeepCopy()
	p.Status.PodIP, p.Status.HostIP = w.ip, nodeIP
	return p
}

// commandLine expands the container's command and args with its
// environment, as the kubelet does, and moves mount paths to the pod's
// directories.
func commandLine(c *corev1.Container, env *envVars, mounts []mount) (command, args []string) {
	lookup := func(string) (string, bool) { return "", false }
	if env != nil {
		lookup = env.lookup
	}
	for _, s := range c.Command {
		command = append(command, rewritePaths(expand(s, lookup), mounts))
	}
	for _, s := range c.Args {
		args = append(args, rewritePaths(expand(s, lookup), mounts))
	}
	return command, args
}

// rewriteConfig is what the nats container reads from a ConfigMap file:
// paths made real here, and, in the file it runs with, every listener on
// the pod's address. Pod DNS names stay: the server resolves them through
// its hosts file (hosts.go).
func (w *podWorker) rewriteConfig(path string, data []byte, mounts []mount, configFile string) []byte {
	text := rewritePaths(string(data), mounts)
	if path == configFile {
		text = bindListeners(text, w.listenAddress())
	}
	return []byte(text)
}

// startNats starts a run of the nats container.
func (w *podWorker) startNats(ctx context.Context, c *corev1.Container, command, args []string, env *envVars, mounts []mount) error {
	n := &w.nats
	binary, version, err := binaryFor(w.k.natsBinaries, c.Image)
	if err != nil {
		w.imagePullFailed(c, err)
		return err
	}
	n.pullBackoff = 0
	// The image's entrypoint is nats-server; a command that runs anything
	// else (a shell) has no meaning without the image.
	if len(command) > 0 {
		if err := executableIn(c.Image, command[0]); err != nil {
			err = fmt.Errorf("%w (the loopback kubelet runs only the image's nats-server)", err)
			w.notStarted("RunContainerError", err)
			return err
		}
	}
	if len(command) > 0 {
		args = append(append([]string{}, command[1:]...), args...)
	}
	workDir := filepath.Join(w.dir, "rootfs")
	if c.WorkingDir != "" {
		workDir = rewritePaths(c.WorkingDir, mounts)
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		w.notStarted("RunContainerError", err)
		return err
	}
	if n.last != nil {
		n.restarts++
	}
	logPath := w.k.logPath(w.pod)
	header := fmt.Sprintf("=== loopback kubelet: run %d of pod %s (uid %s) at %s: %s %s\n",
		n.runs+1, w.key, w.uid, time.Now().Format(time.RFC3339Nano), binary, strings.Join(args, " "))
	appendFile(logPath, header)
	hosts, err := w.hostsFile()
	if err != nil {
		w.notStarted("RunContainerError", err)
		return err
	}
	proc, err := startProcess(w.k.reaper, binary, args, env.list(), workDir, logPath, hosts)
	if err != nil {
		w.notStarted("RunContainerError", err)
		return err
	}
	n.runs++
	runCtx, cancel := context.WithCancel(ctx)
	run := &containerRun{id: n.runs, proc: proc, cancel: cancel,
		binary: binary, env: env.list(), workDir: workDir, mounts: mounts}
	n.run, n.waiting, n.started, n.ready, n.answering = run, nil, false, false, false
	n.imageID = "loopback://nats-server@" + version
	w.k.logf("%s: started nats-server %s, pid %d, run %d", w.key, version, proc.pid(), run.id)
	go func() {
		<-proc.done
		w.send(ctx, func() { w.natsExited(run) })
	}()
	if c.StartupProbe != nil {
		w.startProber(runCtx, run, c, startupProbe, c.StartupProbe)
	} else {
		w.natsStarted(runCtx, run, c)
	}
	return nil
}

func appendFile(path, text string) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(text)
}

// imagePullFailed is an image with no nats-server built for it, which is
// what a tag missing from the registry is to a real kubelet: ErrImagePull
// the first time, then ImagePullBackOff with a growing back-off.
func (w *podWorker) imagePullFailed(c *corev1.Container, err error) {
	n := &w.nats
	reason, message := "ErrImagePull", err.Error()
	if n.pullBackoff > 0 {
		reason, message = "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: %v", c.Image, err)
	}
	n.pullBackoff = min(max(2*n.pullBackoff, firstBackoff), maxBackoff)
	n.notBefore = time.Now().Add(n.pullBackoff)
	n.waitingFor(reason, message)
	w.k.logf("%s: %s: %s", w.key, reason, message)
}
