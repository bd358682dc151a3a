package s3server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Client is an S3 client of the store, trusting its CA alone.
func (s *Server) Client() (*minio.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CAPEM) {
		return nil, errors.New("s3server: no CA")
	}
	transport, err := minio.DefaultTransport(true)
	if err != nil {
		return nil, err
	}
	transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return minio.New(s.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Secure: true, Transport: transport, Region: "us-east-1"})
}

// waitReady returns once the bucket answers, or the store exited.
func (s *Server) waitReady(within time.Duration) error {
	c, err := s.Client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("SeaweedFS exited: see %s", filepath.Join(s.Dir, "weed.log"))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ok, err := c.BucketExists(ctx, s.Bucket)
		cancel()
		if ok && err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("SeaweedFS's bucket %s not ready after %s (%v): see %s", s.Bucket, within, err, filepath.Join(s.Dir, "weed.log"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
