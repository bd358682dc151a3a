package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// AccountReferencePath is where the API server sends its reviews of
// objects that name a NatsAccount (config/webhook).
const AccountReferencePath = "/validate-account-reference"

// accountField is where every kind it reviews names its account: a
// NatsUser's spec.account, and the JetStream kinds' (their target is
// inlined in the spec).
var accountField = field.NewPath("spec", "account")

// Lookup is what asking the API server for the named account found.
type Lookup int

const (
	// NotAsked: nothing to look up (no account named, or not a creation).
	NotAsked Lookup = iota
	// Found: the namespace has the account.
	Found
	// Missing: it has none of that name.
	Missing
	// Unanswered: the API server could not say.
	Unanswered
)

// reviewed is what a review is about: the account the object names (""
// for none) and the namespace the object says it is in.
type reviewed struct {
	account   string
	namespace string
}

// readReviewed decodes the object under review's namespace and account
// only: the rest of the object is the CRD schema's and the controllers'
// to judge.
func readReviewed(raw []byte) (reviewed, error) {
	var o struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec struct {
			Account string `json:"account"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return reviewed{}, fmt.Errorf("the object under review: %w", err)
	}
	return reviewed{account: o.Spec.Account, namespace: o.Metadata.Namespace}, nil
}

// needsLookup says whether a review must ask for the account: only the
// creation of an object in a namespace that names an account of that
// namespace. An update cannot change the account (a user's account is
// immutable, and a JetStream resource moving account is the controller's
// to refuse), and refusing an update of an object whose account was
// deleted since would block removing its finalizer.
//
// The answer is only ever about the reviewed object's own namespace: the
// API server sends the request's namespace and fills the object's with
// it. A review whose two disagree, or that has none, comes from no API
// server: it is admitted without a lookup, the same reply whatever exists
// anywhere, so that whoever reaches the port cannot ask about a namespace
// through an object that is not in it.
func needsLookup(op admissionv1.Operation, requestNamespace string, r reviewed) bool {
	return op == admissionv1.Create && r.account != "" && requestNamespace != "" && r.namespace == requestNamespace
}

// Decide is the review's answer. Only an account the API server says is
// missing is refused, naming the field; an unanswered lookup admits the
// object, as the webhook's failure policy would, and the resource's
// condition reports the account if it is indeed missing.
func Decide(namespace, account string, found Lookup) admission.Response {
	if found != Missing {
		return admission.Allowed("")
	}
	message := fmt.Sprintf("%s: Not found: %q: there is no NatsAccount %s in namespace %s; create the account first",
		accountField, account, account, namespace)
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
		Allowed: false,
		Result: &metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusUnprocessableEntity,
			Reason:  metav1.StatusReasonInvalid,
			Message: message,
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
				Type:    metav1.CauseTypeFieldValueNotFound,
				Field:   accountField.String(),
				Message: fmt.Sprintf("Not found: %q", account),
			}}},
		},
	}}
}
