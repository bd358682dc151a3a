package accountcontroller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubenats/kubenats/api/v1alpha1"
	"github.com/kubenats/kubenats/internal/accounts"
	"github.com/kubenats/kubenats/internal/render"
)

// maxCreds bounds what is read from a creds Secret, which its namespace
// may edit: a real creds file is under 2 KiB.
const maxCreds = 16 << 10

// credsTarget is what every creds Secret of an account names besides the
// creds: the cluster's URL and the CA of its client certificates.
type credsTarget struct {
	cluster *v1alpha1.NatsCluster
	caPEM   []byte
}

func (t credsTarget) url() string { return render.InternalURL(t.cluster) }

// digest is what u's creds Secret is written for: its claims without
// key or issue time, the account's identity and signing keys, the URL and
// the CA. A change to any writes the Secret anew; nothing else does.
func (t credsTarget) digest(u *v1alpha1.NatsUser, keys accounts.AccountKeys) string {
	// The key is left out (the same placeholder for every user): a digest
	// that changed with the key would rewrite creds the plan keeps.
	c, err := accounts.UserClaims(accounts.User{Name: u.Namespace + "/" + u.Name, Spec: u.Spec, PublicKey: "any", Account: keys.PublicKey})
	if err != nil {
		return "invalid"
	}
	claims, _ := json.Marshal(c)
	h := sha256.New()
	for _, part := range [][]byte{claims, []byte(keys.SigningKey), []byte(t.url()), t.caPEM} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// userViews reads each user's creds Secret.
func (r *Reconciler) userViews(ctx context.Context, users []*v1alpha1.NatsUser) ([]userView, error) {
	views := make([]userView, 0, len(users))
	for _, u := range users {
		v := userView{User: u}
		var s corev1.Secret
		key := client.ObjectKey{Namespace: u.Namespace, Name: u.CredentialsSecretName()}
		err := r.Get(ctx, key, &s)
		if apierrors.IsNotFound(err) {
			// Not in the cache: none, or one without kubenats' label.
			err = r.APIReader.Get(ctx, key, &s)
		}
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		case !metav1.IsControlledBy(&s, u):
			v.Creds = credsForeign
		default:
			v.Creds = credsOurs
			v.Digest = s.Annotations[AnnotationCredsDigest]
			v.seed, v.SeedKey = credsSeed(s.Data[v1alpha1.CredsKey])
		}
		views = append(views, v)
	}
	return views, nil
}

// credsSeed is the user seed in a creds file and its public key, or
// nothing when it holds none.
func credsSeed(creds []byte) ([]byte, string) {
	if len(creds) == 0 || len(creds) > maxCreds {
		return nil, ""
	}
	kp, err := jwt.ParseDecoratedUserNKey(creds)
	if err != nil {
		return nil, ""
	}
	defer kp.Wipe()
	kept, err := kp.Seed()
	if err != nil {
		return nil, ""
	}
	// A copy: Wipe zeroes the key pair's own bytes, which Seed returns.
	seed := append([]byte(nil), kept...)
	pub, err := accounts.PublicKey(seed, nkeys.PrefixByteUser)
	if err != nil {
		return nil, ""
	}
	return seed, pub
}

// issued is what happened to one user's creds this pass.
type issued struct {
	PublicKey string
	Err       error
}

// issue writes the creds Secret of each user the plan issues, with its
// finalizer added first: a user deleted after its creds exist is always
// revoked.
func (r *Reconciler) issue(ctx context.Context, p userPlan, seeds map[types.UID][]byte, keys accounts.AccountKeys, t credsTarget) map[types.UID]issued {
	out := map[types.UID]issued{}
	for _, is := range p.Issue {
		u := is.User
		pub, err := r.issueOne(ctx, u, is.NewKey, seeds[u.UID], keys, t)
		out[u.UID] = issued{PublicKey: pub, Err: err}
		if err != nil {
			log.FromContext(ctx).Info("issuing a user's credentials failed", "user", u.Name, "error", err.Error())
		}
		if err == nil {
			verb := "re-issued"
			if is.NewKey {
				verb = "issued with a new key"
			}
			r.Recorder.Eventf(u, nil, corev1.EventTypeNormal, "CredentialsIssued", "Issue",
				"credentials %s in Secret %s", verb, u.CredentialsSecretName())
		}
	}
	return out
}

func (r *Reconciler) issueOne(ctx context.Context, u *v1alpha1.NatsUser, newKey bool, seed []byte, keys accounts.AccountKeys, t credsTarget) (string, error) {
	if controllerutil.AddFinalizer(u, v1alpha1.UserFinalizer) {
		if err := r.Update(ctx, u); err != nil {
			return "", err
		}
	}
	if newKey || seed == nil {
		var err error
		if seed, err = accounts.NewSeed(nkeys.PrefixByteUser); err != nil {
			return "", err
		}
	}
	pub, err := accounts.PublicKey(seed, nkeys.PrefixByteUser)
	if err != nil {
		return "", err
	}
	claims, err := accounts.UserClaims(accounts.User{Name: u.Namespace + "/" + u.Name, Spec: u.Spec, PublicKey: pub, Account: keys.PublicKey})
	if err != nil {
		return "", err
	}
	userJWT, err := accounts.Sign(claims, keys.SigningSeed)
	if err != nil {
		return "", err
	}
	creds, err := accounts.Creds(userJWT, seed)
	if err != nil {
		return "", err
	}
	data := map[string][]byte{v1alpha1.CredsKey: creds, v1alpha1.CredsURLKey: []byte(t.url())}
	if len(t.caPEM) > 0 {
		data[v1alpha1.CredsCAKey] = t.caPEM
	}
	s := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   u.Namespace,
			Name:        u.CredentialsSecretName(),
			Labels:      map[string]string{render.LabelManagedBy: render.ManagedBy, LabelAccount: u.Spec.Account},
			Annotations: map[string]string{AnnotationCredsDigest: t.digest(u, keys)},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	if err := r.Applier.Apply(ctx, u, s); err != nil {
		return "", err
	}
	return pub, nil
}
