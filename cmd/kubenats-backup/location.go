package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/kubenats/kubenats/internal/backup"
)

// Where a backup is: a directory, or s3://BUCKET/KEY in the object store
// the -s3-* flags describe.
const s3Scheme = "s3://"

// storeFlags describe the object store of an s3:// place. The keys come
// from files (a Secret mounted into the Job's pod), never the command
// line, and the store is reached over TLS only.
type storeFlags struct {
	endpoint, region, credentials, ca *string
}

func addStoreFlags(fs *flag.FlagSet) storeFlags {
	return storeFlags{
		endpoint:    fs.String("s3-endpoint", "", "the object store's host[:port], reached over HTTPS"),
		region:      fs.String("s3-region", "", "the bucket's region (empty: asked of the store)"),
		credentials: fs.String("s3-credentials", "", "a directory holding the files accessKeyID and secretAccessKey"),
		ca:          fs.String("s3-ca", "", "CA the store's certificate chains to (empty: the image's public roots)"),
	}
}

// location is the place named by where: s3://BUCKET/KEY in the store the
// flags describe, or else a directory.
func (f storeFlags) location(where string) (backup.Location, error) {
	if !strings.HasPrefix(where, s3Scheme) {
		if *f.endpoint != "" {
			return nil, errors.New("-s3-endpoint goes with an s3:// place")
		}
		return backup.Dir(where), nil
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(where, s3Scheme), "/")
	key = strings.Trim(key, "/")
	if bucket == "" || key == "" || key != filepath.Clean(key) || strings.Contains("/"+key+"/", "/../") {
		return nil, fmt.Errorf("%q is not s3://BUCKET/KEY", where)
	}
	if *f.endpoint == "" {
		return nil, errors.New("an s3:// place needs -s3-endpoint")
	}
	client, err := f.client()
	if err != nil {
		return nil, err
	}
	return backup.Object{Client: client, Bucket: bucket, Key: key}, nil
}

func (f storeFlags) client() (*minio.Client, error) {
	if *f.credentials == "" {
		return nil, errors.New("an s3:// place needs -s3-credentials")
	}
	id, err := readSecretFile(filepath.Join(*f.credentials, "accessKeyID"), "")
	if err != nil {
		return nil, fmt.Errorf("-s3-credentials: the access key: %w", err)
	}
	secret, err := readSecretFile(filepath.Join(*f.credentials, "secretAccessKey"), "")
	if err != nil {
		return nil, fmt.Errorf("-s3-credentials: the secret key: %w", err)
	}
	transport, err := minio.DefaultTransport(true)
	if err != nil {
		return nil, err
	}
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if *f.ca != "" {
		pem, err := os.ReadFile(*f.ca)
		if err != nil {
			return nil, fmt.Errorf("-s3-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-s3-ca: %s holds no PEM certificate", *f.ca)
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	// The client never follows a redirect (minio-go's own rule): the store
	// that answers is the one named here.
	return minio.New(*f.endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(id, secret, ""),
		Secure:    true,
		Region:    *f.region,
		Transport: transport,
	})
}
