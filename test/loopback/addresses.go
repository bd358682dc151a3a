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

// addressBook hands out addresses. Each harness owns one /24 of loopback,
// 127.0.<slot>.0, chosen by a lock file so that harnesses running at the
// same time (test packages run in parallel) never share an address; the
// lock goes away with the process, however it ends.
//
// A pod gets an address of its own for its life, as a real network plugin
// gives each pod sandbox one: a pod re-created under the same name (a
// StatefulSet's replacement) gets another, and an address given back is
// handed out again only after every other free one (the allocation goes
// round the range), so that nothing that still holds a dead pod's address
// reaches the next pod by chance. Names stand for pods (cluster DNS); an
// address never does.
//
// Named addresses (name) are for the mesh's own listeners: kept for the
// life of the harness, never given to a pod.
type addressBook struct {
	slot int
	lock *os.File

	mu sync.Mutex
	// used is every host number handed out (1..254), by what holds it.
	used map[int]string
	// cursor is the host number handed out last: the search for a free one
	// starts after it.
	cursor int
	named  map[string]string
	// pods is the address of each pod (by UID) that holds one; current is
	// the pod of each name that holds one: one at a time, since a
	// replacement starts only once its predecessor's process has exited.
	pods    map[types.UID]int
	current map[types.NamespacedName]types.UID
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
			return &addressBook{slot: slot, lock: f, used: map[int]string{}, named: map[string]string{},
				pods: map[types.UID]int{}, current: map[types.NamespacedName]types.UID{}}, nil
		}
		_ = f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
	}
	return nil, errors.New("every 127.0.x.0/24 slot is taken by another loopback cluster")
}

// nextFreeLocked takes the first free host number after the cursor.
func (b *addressBook) nextFreeLocked(holder string) (int, error) {
	for i := 1; i <= 254; i++ {
		n := (b.cursor+i-1)%254 + 1
		if _, taken := b.used[n]; taken {
			continue
		}
		b.used[n], b.cursor = holder, n
		return n, nil
	}
	return 0, fmt.Errorf("no address left in 127.0.%d.0/24 for %s", b.slot, holder)
}

func (b *addressBook) ip(n int) string { return fmt.Sprintf("127.0.%d.%d", b.slot, n) }

// name is the address kept under name, allocated on first use.
func (b *addressBook) name(name string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ip, ok := b.named[name]; ok {
		return ip, nil
	}
	n, err := b.nextFreeLocked(name)
	if err != nil {
		return "", err
	}
	b.named[name] = b.ip(n)
	return b.ip(n), nil
}

// address is the address kept for a name of the mesh's in namespace ns.
func (b *addressBook) address(ns, name string) (string, error) {
	return b.name(ns + "/" + name)
}

// acquire gives the pod uid, named key, an address of its own; ok is false
// while an earlier pod of that name still holds one (its process runs).
func (b *addressBook) acquire(key types.NamespacedName, uid types.UID) (ip string, ok bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, ok := b.pods[uid]; ok {
		return b.ip(n), true, nil
	}
	if h, held := b.current[key]; held && h != uid {
		return "", false, nil
	}
	n, err := b.nextFreeLocked(key.String() + " (" + string(uid) + ")")
	if err != nil {
		return "", false, err
	}
	b.pods[uid], b.current[key] = n, uid
	return b.ip(n), true, nil
}

// release gives back the address of pod uid once its process is gone.
func (b *addressBook) release(key types.NamespacedName, uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.pods[uid]
	if !ok {
		return
	}
	delete(b.pods, uid)
	delete(b.used, n)
	if b.current[key] == uid {
		delete(b.current, key)
	}
}

// podAddress is the address of the pod named key that holds one now, ""
// when none does (not created yet, or its process is gone).
func (b *addressBook) podAddress(key types.NamespacedName) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if uid, ok := b.current[key]; ok {
		return b.ip(b.pods[uid])
	}
	return ""
}

func (b *addressBook) close() { _ = b.lock.Close() }
