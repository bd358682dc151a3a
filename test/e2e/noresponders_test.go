package e2e_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/nats-io/nats.go"
)

// withServerView adds to a "no responders" answer what the server that
// sent it knows: a JetStream API request meets no responders only when
// the server the client is connected to has no subscriber for $JS.API in
// the client's account (the account's import of the system account's
// API is missing or broken), so its name, its /subsz for the subject and
// its /accountz of the account say which. Any other error is returned as
// it is.
func withServerView(err error, nc *nats.Conn, account, subject string) error {
	if !errors.Is(err, nats.ErrNoResponders) {
		return err
	}
	host, _, splitErr := net.SplitHostPort(nc.ConnectedAddr())
	if splitErr != nil {
		return fmt.Errorf("%w (connected to %q, %q)", err, nc.ConnectedServerName(), nc.ConnectedAddr())
	}
	subs := monitorText(host, "/subsz?subs=1&acc="+url.QueryEscape(account)+"&test="+url.QueryEscape(subject))
	acc := monitorText(host, "/accountz?acc="+url.QueryEscape(account))
	return fmt.Errorf("%w from %s at %s; its /subsz: %s; its /accountz: %s", err, nc.ConnectedServerName(), host, subs, acc)
}

// monitorText is the first 4 KiB of a monitor page, or why there is none.
func monitorText(ip, path string) string {
	resp, err := monitorClient.Get("http://" + net.JoinHostPort(ip, "8222") + path)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return resp.Status + ": " + string(b)
	}
	return string(b)
}
