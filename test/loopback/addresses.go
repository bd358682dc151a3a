package loopback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"k8s.io/apimachinery/pkg/types"
)

// addressBook hands out pod addresses. Each harness owns one /24 of
// loopback, 127.0.<slot>.0, chosen by a lock file so that harnesses running
// at the same time (test packages run in parallel) never share an address;
// the lock goes away with the process, however it ends.
//
// An address belongs to a (namespace, pod name) for the life of the
// harness, from the first time anyone asks for it, even before that pod
// exists: it stands in for the pod's DNS name, which a StatefulSet keeps
// across pod replacements, and which another server's nats.conf names before
// the pod is created.
type addressBook struct {
	slot int
	lock *os.File

	mu    sync.Mutex
	byPod map[types.NamespacedName]string
	// holder is the pod (by UID) whose process may use an address now: a
	// replacement pod waits until its predecessor's process has exited.
	holder map[string]types.UID
}

func newAddressBook() (*addressBook, error) {
	for slot := 1; slot <= 254; slot++ {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("kubenats-loopback-127.0.%d.lock", slot))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, err
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &addressBook{slot: slot, lock: f, byPod: map[types.NamespacedName]string{}, holder: map[string]types.UID{}}, nil
		}
		_ = f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
	}
	return nil, errors.New("every 127.0.x.0/24 slot is taken by another loopback cluster")
}

// address is the pod's address, allocated on first use.
func (b *addressBook) address(ns, pod string) (string, error) {
	key := types.NamespacedName{Namespace: ns, Name: pod}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ip, ok := b.byPod[key]; ok {
		return ip, nil
	}
	n := len(b.byPod) + 1
	if n > 254 {
		return "", fmt.Errorf("no address left in 127.0.%d.0/24 for %s", b.slot, key)
	}
	ip := fmt.Sprintf("127.0.%d.%d", b.slot, n)
	b.byPod[key] = ip
	return ip, nil
}

// acquire lets the pod with uid use its address; false while the process of
// an earlier pod of the same name still holds it.
func (b *addressBook) acquire(ip string, uid types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.holder[ip]; ok && h != uid {
		return false
	}
	b.holder[ip] = uid
	return true
}

// release frees the address once uid's process is gone.
func (b *addressBook) release(ip string, uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holder[ip] == uid {
		delete(b.holder, ip)
	}
}

func (b *addressBook) close() { _ = b.lock.Close() }
