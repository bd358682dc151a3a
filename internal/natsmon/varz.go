package natsmon

import (
	"context"
	"net/http"
)

// FetchVersion reads one server's version from its monitor port, at url
// (/varz on the server's monitor address).
func FetchVersion(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var varz struct {
		Version string `json:"version"`
	}
	if err := decodeJSON(resp, maxVarzBody, &varz); err != nil {
		return "", err
	}
	return varz.Version, nil
}
