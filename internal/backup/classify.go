package backup

import (
	"errors"
	"syscall"

	"github.com/minio/minio-go/v7"
	"github.com/nats-io/jsm.go/api"
	"github.com/nats-io/nats.go"

	"github.com/kubenats/kubenats/internal/backupreport"
)

// Reason is the report reason of an error of Take or Restore: what a
// condition says, so that a user tells a refusal from a full claim
// without reading the pod's log.
func Reason(err error) string {
	var apiErr api.ApiError
	switch {
	case errors.Is(err, ErrExists):
		return backupreport.ReasonExists
	case errors.Is(err, ErrStalled):
		return backupreport.ReasonStalled
	case errors.Is(err, ErrStreamExists):
		return backupreport.ReasonStreamExists
	case errors.Is(err, ErrChecksum), errors.Is(err, ErrChanged):
		return backupreport.ReasonChecksum
	case errors.Is(err, ErrNotABackup):
		return backupreport.ReasonNotABackup
	case errors.Is(err, ErrOtherStream):
		return backupreport.ReasonOtherStream
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return backupreport.ReasonOutOfSpace
	case errors.Is(err, ErrStore) && storeAnswered(err):
		return backupreport.ReasonStoreRefused
	case errors.Is(err, ErrStore):
		return backupreport.ReasonStoreUnreachable
	case errors.As(err, &apiErr):
		return backupreport.ReasonServerRefused
	case errors.Is(err, nats.ErrNoServers), errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrNoResponders):
		return backupreport.ReasonUnreachable
	}
	return backupreport.ReasonFailed
}

// storeAnswered says whether err is the object store's own answer (an S3
// error code) rather than no answer at all.
func storeAnswered(err error) bool {
	var answer minio.ErrorResponse
	return errors.As(err, &answer) && answer.Code != ""
}
