package render

import (
	"fmt"
	"net/url"

	"github.com/kubenats/kubenats/api/v1alpha1"
)

// ClientScheme is tls: the client port always serves TLS, and a client
// that sees tls:// insists on it, so it never sends credentials in the
// clear, also to servers that accept plaintext (allowPlaintext).
const ClientScheme = "tls"

// InternalURL is the in-cluster client URL, with no credentials.
func InternalURL(c *v1alpha1.NatsCluster) string {
	return fmt.Sprintf("%s://%s:%d", ClientScheme, c.InternalHost(), ClientPort)
}

// urlWithUserinfo builds the internal URL with credentials, escaped by
// net/url so that any character in a user's own password survives.
func urlWithUserinfo(c *v1alpha1.NatsCluster, user, password string) string {
	u := url.URL{Scheme: ClientScheme, Host: fmt.Sprintf("%s:%d", c.InternalHost(), ClientPort)}
	if password == "" {
		u.User = url.User(user)
	} else {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}
