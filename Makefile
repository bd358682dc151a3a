# kubenats: build, generate and test. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN            := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen-v0.23.0
KUSTOMIZE      := $(BIN)/kustomize-v5.8.2
K8S_ASSETS     := $(BIN)/k8s
GO_TEST_FLAGS  ?= -count=1 -timeout=40m

export KUBEBUILDER_ASSETS := $(K8S_ASSETS)

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: build
build: ## Build bin/kubenats, the backups' data path bin/kubenats-backup and the kubectl plugin bin/kubectl-kubenats.
	go build -trimpath -o $(BIN)/kubenats ./cmd/kubenats
	go build -trimpath -o $(BIN)/kubenats-backup ./cmd/kubenats-backup
	go build -trimpath -o $(BIN)/kubectl-kubenats ./cmd/kubectl-kubenats

.PHONY: generate
generate: $(CONTROLLER_GEN) $(KUSTOMIZE) ## Generate deepcopy, CRDs, RBAC, the alert rules and dashboards, the chart's copies of them, dist/install.yaml and docs/api.md.
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd rbac:roleName=kubenats-manager paths=./api/... paths=./internal/natscluster/... paths=./internal/jetstreamcontroller/... paths=./internal/accountcontroller/... paths=./internal/backupcontroller/... paths=./internal/schedulecontroller/... paths=./internal/manager/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	go run ./hack/genadmission config/admission/policy.yaml
	go run ./hack/genmonitoring config
	go run ./hack/genchart config charts/kubenats
	$(KUSTOMIZE) build config/default > dist/install.yaml
	$(KUSTOMIZE) build config/namespaced > dist/install-namespaced.yaml
	$(KUSTOMIZE) build config/istio > dist/install-istio.yaml
	$(KUSTOMIZE) build config/metrics-certmanager > dist/install-metrics-certmanager.yaml
	go run ./hack/genapidocs -out docs/api.md api/v1alpha1

.PHONY: verify-generate
verify-generate: generate ## Fail when the generated files are not committed as generated.
	@git diff --exit-code -- api config dist charts docs/api.md || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

.PHONY: lint
lint: ## go vet and gofmt.
	go vet ./...
	cd test/netpol && go vet ./...
	cd test/promql && go vet ./...
	cd hack/benchplot && go vet ./...
	cd test/helm && go vet ./...
	cd hack/image && go vet ./...
	@out=$$(gofmt -l api cmd internal hack test); [ -z "$$out" ] || { echo "gofmt needed: $$out"; exit 1; }

# The operator's image, built without Docker (hack/image): static binaries
# for linux/amd64 and linux/arm64, on an empty base, as one OCI index in
# bin/image (an OCI layout, its archive for `ctr images import` or kind, and
# an SPDX SBOM). The reference is internal/release's, as the install's.
IMAGE_REPO    := $(shell sed -n 's/^\tRepository = "\(.*\)"$$/\1/p' internal/release/release.go)
IMAGE_VERSION := $(shell sed -n 's/^\tVersion *= "\(.*\)"$$/\1/p' internal/release/release.go)
IMAGE         ?= $(IMAGE_REPO):$(IMAGE_VERSION)
IMAGE_OUT     ?= $(BIN)/image
IMAGE_ARCHES  := amd64 arm64

.PHONY: image
image: ## Build the operator's image (both platforms) into bin/image: OCI layout, archive, SBOM. Same commit, same digest.
	@for arch in $(IMAGE_ARCHES); do \
		echo ">> kubenats for linux/$$arch"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags "-s -w -X main.version=$(IMAGE_VERSION)" -o $(IMAGE_OUT)/bin/kubenats-linux-$$arch ./cmd/kubenats || exit 1; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch go build -trimpath -ldflags "-s -w" -o $(IMAGE_OUT)/bin/kubenats-backup-linux-$$arch ./cmd/kubenats-backup || exit 1; \
	done
	cd hack/image && go run . build -ref $(IMAGE) -out $(IMAGE_OUT) \
		$(foreach a,$(IMAGE_ARCHES),-bin $(a)=$(IMAGE_OUT)/bin/kubenats-linux-$(a) -backup-bin $(a)=$(IMAGE_OUT)/bin/kubenats-backup-linux-$(a)) \
		-source https://github.com/kubenats/kubenats -revision "$$(git rev-parse HEAD)" \
		-version $(IMAGE_VERSION) -created "$$(git log -1 --format=%ct)"

.PHONY: image-push
image-push: image ## Push bin/image to IMAGE=registry/name:tag (credentials of docker login).
	cd hack/image && go run . push -layout $(IMAGE_OUT)/oci -ref $(IMAGE)

# Two builds of the same commit, in two folders, must give one digest.
.PHONY: image-check
image-check: ## Build the image twice and fail unless both digests are the same.
	$(MAKE) --no-print-directory image IMAGE_OUT=$(BIN)/image-check/1 | tee $(BIN)/image-check.1
	$(MAKE) --no-print-directory image IMAGE_OUT=$(BIN)/image-check/2 | tee $(BIN)/image-check.2
	@a=$$(grep -o 'sha256:[0-9a-f]*' $(BIN)/image-check.1); b=$$(grep -o 'sha256:[0-9a-f]*' $(BIN)/image-check.2); \
	[ -n "$$a" ] && [ "$$a" = "$$b" ] || { echo "two builds of one commit: $$a and $$b"; exit 1; }; echo "reproducible: $$a"

# The real node's images (test/realnode), as OCI archives in bin/node-images
# for `ctr -n k8s.io images import`: nats:<v> and nats:<v>-alpine laid out as
# the official images from the static nats-servers, the pause image, and the
# operator's image for this machine's platform under its shipped name.
NODE_IMAGES ?= $(BIN)/node-images
NODE_ARCH   := $(shell go env GOARCH)

.PHONY: node-images
node-images: ## Build the real node's images (NATS, pause, the operator for this platform) into bin/node-images.
	hack/build-nats-servers.sh
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o $(NODE_IMAGES)/bin/pause ./hack/pause
	CGO_ENABLED=0 GOOS=linux GOARCH=$(NODE_ARCH) go build -trimpath -ldflags "-s -w -X main.version=$(IMAGE_VERSION)" -o $(NODE_IMAGES)/bin/kubenats ./cmd/kubenats
	CGO_ENABLED=0 GOOS=linux GOARCH=$(NODE_ARCH) go build -trimpath -ldflags "-s -w" -o $(NODE_IMAGES)/bin/kubenats-backup ./cmd/kubenats-backup
	cd hack/image && go run . node -out $(NODE_IMAGES) -arch $(NODE_ARCH) -nats $(BIN)/nats-server \
		-pause $(NODE_IMAGES)/bin/pause -operator $(NODE_IMAGES)/bin/kubenats -backup $(NODE_IMAGES)/bin/kubenats-backup -ref $(IMAGE) \
		-source https://github.com/kubenats/kubenats -revision "$$(git rev-parse HEAD)" \
		-version $(IMAGE_VERSION) -created "$$(git log -1 --format=%ct)"

.PHONY: test-bins
test-bins: ## Build the Kubernetes control plane, nats-server, cert-manager, Istio injector, Prometheus, natscli, SeaweedFS and the real node's binaries for the tests, install containerd and the CNI plugins from Debian (first time ~45 min).
	hack/build-k8s-bins.sh
	hack/build-nats-servers.sh
	hack/build-cert-manager.sh
	hack/build-istio.sh
	hack/build-prometheus.sh
	hack/build-natscli.sh
	hack/build-seaweedfs.sh
	hack/build-node-bins.sh
	hack/install-node-packages.sh

.PHONY: test
# The main module's tests are long and mostly wait (the end-to-end suite
# is about 18 minutes of clusters forming and rolling); the NetworkPolicy
# truth tables, the PromQL check and the short fuzz run beside them, the
# fuzz with one worker, instead of after them. test/helm (the chart, its
# own module) runs beside them too. Every part runs to its end
# and the target fails if any did. The main run prints through
# hack/testsummary: what plain go test prints, then the slowest tests.
# Two packages run at once (go test's default here): three were no faster
# (19.0 minutes against 18.8 on a quiet machine) and loaded the two cores
# so that a watched change took over 10 s to reach envtest's operator.
# The two longest packages are named first, so that they start first (go
# test starts packages in the order given): the real node (about 10
# minutes) ran last, after the end-to-end suite, and made the tail.
test: test-bins ## Run every test: unit, envtest with a real nats-server, the loopback cluster end to end; beside them the NetworkPolicy truth tables, the PromQL check and a short fuzz.
	go test -json $(GO_TEST_FLAGS) ./test/e2e ./test/realnode ./... 2>&1 | go run ./hack/testsummary & main=$$!; status=0; \
	(cd test/netpol && go test $(GO_TEST_FLAGS) ./...) || status=1; \
	(cd test/promql && go test $(GO_TEST_FLAGS) ./...) || status=1; \
	(cd test/helm && go test $(GO_TEST_FLAGS) ./...) || status=1; \
	(cd hack/image && go test $(GO_TEST_FLAGS) ./...) || status=1; \
	$(MAKE) fuzz FUZZ_WORKERS=1 || status=1; \
	wait $$main || status=1; \
	exit $$status

# The tests that read the official chart's rendering or NACK's examples
# (package test/upstream gives them), run against the real files instead
# of the project's stand-ins: UPSTREAM_FIXTURES is a directory holding
# nats-chart/ and nack/ as CI's ../shared/fixtures does. .ci/run runs this
# when that directory is there; `make test` never reads outside the
# repository. test/upstream's TestUpstreamTestsListed keeps this list
# whole.
UPSTREAM_FIXTURES ?= ../shared/fixtures
UPSTREAM_TESTS := TestChartReleaseMatchesTheRealRendering|TestNACKStandInsAreNACKsExampleFiles|\
	TestConvertExitsNonZeroOnWhatItCannotCarry|\
	TestChartRenderingConverts|TestChartSettingsCarriedOrNamed|TestChartCredentialsKubenatsWouldRefuse|TestNACKExamplesConvert|\
	TestConvertedChartReleaseLeavesTheReleaseAlone|TestTakeoverOfAReleaseKubenatsCannotCarryTouchesNothing|TestConvertedNACKExamplesAreValidResources|\
	TestTakeOverAChartRelease|\
	TestForgottenReleaseIsNotUninstalled
UPSTREAM_RUN := ^($(subst $(eval) ,,$(UPSTREAM_TESTS)))$$

.PHONY: test-upstream
test-upstream: test-bins ## Run the tests that read the official chart's rendering and NACK's examples against the real files in UPSTREAM_FIXTURES (CI: ../shared/fixtures).
	@test -d "$(UPSTREAM_FIXTURES)/nats-chart" && test -d "$(UPSTREAM_FIXTURES)/nack" || { echo "UPSTREAM_FIXTURES=$(UPSTREAM_FIXTURES) holds no nats-chart/ and nack/"; exit 1; }
	export KUBENATS_UPSTREAM_FIXTURES=$$(cd "$(UPSTREAM_FIXTURES)" && pwd); \
	go test -tags upstream $(GO_TEST_FLAGS) -run '$(UPSTREAM_RUN)' ./test/upstream/ ./cmd/kubenats/ ./internal/convert/ ./test/envtest/ ./test/e2e/ && \
	cd test/helm && go test -tags upstream $(GO_TEST_FLAGS) -run '$(UPSTREAM_RUN)' ./...

# Fuzz targets, package:target:executions. Each runs its count of inputs past
# its checked-in seed corpus (testdata/fuzz), which plain `go test` already
# runs. A count, not a duration: with a duration, go1.26's fuzzing coordinator
# can report its own deadline as a failure ("context deadline exceeded", no
# input written; golang/go#75804, fixed in go1.27), which a loaded CI run hit.
# A new interesting input is minimized once, not at length. The counts take a
# few seconds each on this machine.
FUZZ_TARGETS := \
	./internal/natsconf:FuzzRender:3000 \
	./internal/natsconf:FuzzCheckRendered:3000 \
	./internal/natsconf:FuzzCheckEnvString:3000 \
	./internal/natsmon:FuzzDecodeJSZ:10000 \
	./internal/jetstream:FuzzTranslate:2000 \
	./internal/jetstream:FuzzGuardAgainstNatsGo:300
# FUZZ_SCALE multiplies every target's executions (FUZZ_SCALE=100 for a long run).
FUZZ_SCALE ?= 1
# FUZZ_WORKERS: fuzzing processes per target; empty for one per CPU.
FUZZ_WORKERS ?=

.PHONY: fuzz
fuzz: ## Fuzz the nats.conf writer and checks, the Secret value check, the monitor reader, the JetStream translation and the NATS guard against a real nats.go, a set number of inputs each (times FUZZ_SCALE).
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; execs=$$(( $${rest##*:} * $(FUZZ_SCALE) )); \
		echo "fuzz $$name ($$pkg, $$execs inputs)"; \
		go test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$${execs}x -fuzzminimizetime=1x $(if $(FUZZ_WORKERS),-parallel=$(FUZZ_WORKERS)) $$pkg || exit 1; \
	done

.PHONY: demo
NODE ?= loopback

demo: ## Run kubenats on this machine: a cluster (NODE=loopback, or NODE=real: a real kubelet and containerd, as root), operator, 3-server NatsCluster, Stream, Consumer, round trip (Ctrl-C stops; DEMO_EXIT=1 exits after the round trip).
	NODE=$(NODE) hack/demo.sh

# Each benchmark runs BENCH_COUNT times; the summary table at the end gives
# each figure's median, its goal and its ratio to its floor. The JetStream
# runs' timelines go to bin/bench/, and the newest is drawn as a PNG there.
BENCH_COUNT ?= 3
BENCH_OUT   := $(BIN)/bench

.PHONY: bench
bench: test-bins ## Run the benchmarks (BENCH_COUNT runs each), print the summary, draw bin/bench/jetstream-ready.png.
	mkdir -p $(BENCH_OUT)
	KUBENATS_BENCH_TIMELINE=$(BENCH_OUT) go test -run='^$$' -bench=. -benchtime=1x -count=$(BENCH_COUNT) -timeout=120m ./test/bench/ | tee $(BENCH_OUT)/bench.txt
	cd hack/benchplot && go run . -in "$$(ls -t $(BENCH_OUT)/jetstream-*.csv | head -1)" -out $(BENCH_OUT)/jetstream-ready.png

# The dashboard pictures of docs/monitoring.md and the README: the e2e test
# with a real Prometheus writes what the dashboards' queries answered over
# its run, and hack/benchplot's dashboard command draws them.
DASHBOARD_OUT := $(BIN)/dashboard

.PHONY: dashboard-images
dashboard-images: test-bins ## Run the e2e test with a real Prometheus and draw two dashboards from its answers into docs/images.
	rm -rf $(DASHBOARD_OUT)
	KUBENATS_DASHBOARD_OUT=$(DASHBOARD_OUT) go test -count=1 -timeout=20m -run '^TestMetricsWithARealPrometheus$$' ./test/e2emetrics/
	cd hack/benchplot && for d in servers streams; do \
		go run ./dashboard -in $(DASHBOARD_OUT)/kubenats-$$d.json -out $(CURDIR)/docs/images/dashboard-$$d.png || exit 1; \
	done

$(CONTROLLER_GEN):
	GOBIN=$(BIN)/tmp go install sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
	mv $(BIN)/tmp/controller-gen $@

$(KUSTOMIZE):
	GOBIN=$(BIN)/tmp go install sigs.k8s.io/kustomize/kustomize/v5@v5.8.2
	mv $(BIN)/tmp/kustomize $@
