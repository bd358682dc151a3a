package v1alpha1

// Subject is a NATS subject or wildcard: dot-separated tokens, none empty,
// none with white space; `*` matches one token and `>`, last only, the
// rest. NATS splits a permission's subject at a space (a queue group) and
// a subject with an empty token never matches: both are refused here,
// where the user still reads which field it was.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=512
// +kubebuilder:validation:Pattern=`^(([^.\s*>]+|\*)\.)*([^.\s*>]+|\*|>)$`
type Subject string

// SubjectPermission allows and denies subjects. Deny wins over allow.
//
// +kubebuilder:validation:XValidation:rule="!has(self.allow) || !has(self.deny) || !self.allow.exists(s, s in self.deny)",message="a subject may not be both allowed and denied"
type SubjectPermission struct {
	// Allow are the subjects permitted. Unset: all but those denied.
	// +kubebuilder:validation:MaxItems=256
	// +listType=set
	// +optional
	Allow []Subject `json:"allow,omitempty"`
	// Deny are the subjects refused, even when an allowed one covers them.
	// +kubebuilder:validation:MaxItems=256
	// +listType=set
	// +optional
	Deny []Subject `json:"deny,omitempty"`
}
