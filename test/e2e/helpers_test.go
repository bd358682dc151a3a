package e2e_test

import (
	"github.com/kubenats/kubenats/test/e2ekit"
	"github.com/kubenats/kubenats/test/loopback"
)

// The suite's harness, shared with the other loopback suites, under the
// names this suite's tests have always used.
type formed = e2ekit.Formed

var (
	// cluster is the loopback cluster every test uses, set as the suite
	// starts.
	cluster *loopback.Cluster

	eventually        = e2ekit.Eventually
	testCtx           = e2ekit.Ctx
	namespace         = e2ekit.Namespace
	natsCluster       = e2ekit.NatsCluster
	get               = e2ekit.Get
	podNames          = e2ekit.PodNames
	formCluster       = e2ekit.FormCluster
	credentials       = e2ekit.Credentials
	connect           = e2ekit.Connect
	addrTLS           = e2ekit.AddrTLS
	clusterTLS        = e2ekit.ClusterTLS
	appConn           = e2ekit.AppConn
	appJetStream      = e2ekit.AppJetStream
	createStream      = e2ekit.CreateStream
	purgeStream       = e2ekit.PurgeStream
	deleteStream      = e2ekit.DeleteStream
	podURLs           = e2ekit.PodURLs
	clusterDNS        = e2ekit.ClusterDNS
	diagnoseOnFailure = e2ekit.DiagnoseOnFailure
	lastLines         = e2ekit.LastLines
	natsStatus        = e2ekit.NatsStatus
)

const (
	formTimeout = e2ekit.FormTimeout
	wait        = e2ekit.Wait
)
