package convert

import "fmt"

// Loss is a NACK setting the conversion does not carry.
type Loss struct {
	// Object is Kind namespace/name of the NACK resource.
	Object string
	// Field is the path in the NACK resource, spec.creds say.
	Field string
	// Why it is not carried, and what to do instead.
	Why string
}

func (l Loss) String() string { return fmt.Sprintf("%s: %s not carried: %s", l.Object, l.Field, l.Why) }
