package exporter

import (
	"io"
	"net/url"

	"github.com/kubenats/kubenats/internal/jsonread"
)

// An account's JetStream limits are on the monitor port only in the
// account's JWT, which /accountz?acc= shows decoded; /jsz shows what an
// account uses but not what it may use. In a server without JWT accounts
// (spec.auth.mode other than jwt) /accountz shows no claims and the limit
// series are not served.
//
// One /accountz is read per JetStream account per scrape, on the meta
// leader only (the limits hold over the whole cluster, as the usage the
// meta leader serves does), and at most maxLimitReads of them: past that,
// the accounts last in /jsz's order serve no limit and are counted in
// kubenats_exporter_series_dropped_total.
const (
	// MaxAccountzBody: one account's /accountz carries its JWT twice
	// (encoded and decoded) with its imports, exports and revocations; a
	// NatsAccount has at most 128 of each, some 100 KiB in all.
	MaxAccountzBody = 1 << 20
	maxLimitReads   = 256
)

// AccountzPath is the /accountz of account a. /accountz knows an account
// by its id, its public key in JWT mode; /jsz names it by the JWT's name
// where there is one.
func AccountzPath(a Account) string {
	key := a.ID
	if key == "" {
		key = a.Name
	}
	return "/accountz?acc=" + url.QueryEscape(key)
}

// AccountLimits is what the series need of /accountz?acc=: the account's
// JetStream limits over the whole cluster, from its JWT.
type AccountLimits struct {
	// Known: the server shows the account's claims with limits for the
	// whole account (not per replica count: tiered limits are not served).
	Known bool
	// MaxMemory and MaxStorage are bytes; -1 is no limit, as in NATS, and
	// 0 is none of that storage (a JWT leaves a zero limit out).
	MaxMemory  int64
	MaxStorage int64
}

func decodeAccountz(r io.Reader) (AccountLimits, error) {
	d := jsonread.New(r, "/accountz")
	var l AccountLimits
	tiered := false
	// Each level keeps one field and skips the rest unbuilt:
	// account_detail.decoded_jwt.nats.limits.
	within := func(name string, inner func() error) func([]byte) error {
		return func(key []byte) error {
			if string(key) != name {
				return d.Skip()
			}
			if isNull, err := d.Null(); isNull || err != nil {
				return err
			}
			return inner()
		}
	}
	limits := func() error {
		l.Known = true
		return d.Object(func(key []byte) (err error) {
			switch string(key) {
			case "mem_storage":
				l.MaxMemory, err = d.Int()
			case "disk_storage":
				l.MaxStorage, err = d.Int()
			case "tiered_limits":
				if isNull, err := d.Null(); isNull || err != nil {
					return err
				}
				err = d.Object(func([]byte) error { tiered = true; return d.Skip() })
			default:
				err = d.Skip()
			}
			return err
		})
	}
	nats := func() error { return d.Object(within("limits", limits)) }
	claims := func() error { return d.Object(within("nats", nats)) }
	detail := func() error { return d.Object(within("decoded_jwt", claims)) }
	if err := d.Object(within("account_detail", detail)); err != nil {
		return AccountLimits{}, err
	}
	if tiered {
		// Limits per replica count leave the account-wide ones at zero:
		// serving those would say the account may store nothing.
		l = AccountLimits{}
	}
	return l, d.End()
}

// limitReads are the accounts whose limits server reads at this scrape:
// those of z on the meta leader, at most maxLimitReads, and how many were
// left out.
func limitReads(server string, z JSZ) (read []Account, dropped int) {
	if z.Meta != nil && z.Meta.Leader != server {
		return nil, 0
	}
	if len(z.Accounts) > maxLimitReads {
		return z.Accounts[:maxLimitReads], len(z.Accounts) - maxLimitReads
	}
	return z.Accounts, 0
}

// AccountLimitSamples are the limit series of account a read from /jsz z,
// with its limits l: none when the limits are not known, and none for a
// limit of -1, which is no number to compare usage with.
func AccountLimitSamples(id Identity, z JSZ, a Account, l AccountLimits) []Sample {
	if !l.Known {
		return nil
	}
	labels := accountLabelValues(id, z, a)
	var out []Sample
	for _, v := range []struct {
		name  string
		limit int64
	}{{FamilyAccountMaxMemory, l.MaxMemory}, {FamilyAccountMaxStorage, l.MaxStorage}} {
		if v.limit >= 0 {
			out = append(out, Sample{Name: v.name, Labels: labels, Value: float64(v.limit)})
		}
	}
	return out
}
