// Command pause is the real node's pod sandbox (test/realnode, `make
// node-images`): the first process of every pod, which holds the pod's
// namespaces while its containers come and go. It does what a sandbox
// must: wait, reap the orphans that end up with it as their parent (it is
// pid 1 of the pod's pid namespace when the pod shares one), and exit
// when told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
