package jetstream

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// nkeyOption signs the server's nonce with a seed held in memory: the seed
// never touches a file.
func nkeyOption(seed []byte) (nats.Option, error) {
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, errors.New("the nkey seed is not valid")
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	return nats.Nkey(pub, func(nonce []byte) ([]byte, error) { return kp.Sign(nonce) }), nil
}

// CredsOption authenticates with a creds file held in memory: its JWT, and
// its seed to sign the server's nonce.
func CredsOption(creds []byte) (nats.Option, error) {
	jwt, err := nkeys.ParseDecoratedJWT(creds)
	if err != nil {
		return nil, errors.New("the creds file holds no user JWT")
	}
	kp, err := nkeys.ParseDecoratedNKey(creds)
	if err != nil {
		return nil, errors.New("the creds file holds no nkey seed")
	}
	return nats.UserJWT(
		func() (string, error) { return jwt, nil },
		func(nonce []byte) ([]byte, error) { return kp.Sign(nonce) },
	), nil
}
