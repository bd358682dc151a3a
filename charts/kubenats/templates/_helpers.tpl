{{/* The operator's image: the servers' metrics containers run it too. */}}
{{- define "kubenats.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The operator's flags, those at their defaults left out. */}}
{{- define "kubenats.args" -}}
- manager
{{- if .Values.leaderElection }}
- --leader-elect
{{- end }}
- --metrics-bind-address={{ if .Values.metrics.enabled }}:{{ .Values.metrics.port }}{{ else }}0{{ end }}
{{- if include "kubenats.metricsTLSSecret" . }}
- --metrics-cert-dir={{ include "kubenats.metricsCertDir" . }}
{{- end }}
- --health-probe-bind-address=:8081
- --webhook-bind-address={{ if include "kubenats.webhook" . }}:{{ .Values.webhook.port }}{{ else }}0{{ end }}
{{- with .Values.watchNamespaces }}
- --watch-namespaces={{ join "," . }}
{{- end }}
{{- with .Values.allowedImageRegistries }}
- --allowed-image-registries={{ join "," . }}
{{- end }}
{{- with .Values.allowedClusterIssuers }}
- --allowed-cluster-issuers={{ join "," . }}
{{- end }}
{{- if kindIs "slice" .Values.allowedIngressHosts }}
- --allowed-ingress-hosts={{ join "," .Values.allowedIngressHosts }}
{{- end }}
{{- with .Values.allowedIngressAnnotations }}
- --allowed-ingress-annotations={{ join "," . }}
{{- end }}
{{- with .Values.connectionAllowedCIDRs }}
- --connection-allowed-cidrs={{ join "," . }}
{{- end }}
{{- with .Values.connectionAllowedNamespaces }}
- --connection-allowed-namespaces={{ join "," . }}
{{- end }}
{{- if .Values.connectionAllowOtherNamespaces }}
- --connection-allow-other-namespaces
{{- end }}
{{- if .Values.allowLocalTargets }}
- --allow-local-targets
{{- end }}
{{- if ne (int .Values.jetstreamWorkers) 16 }}
- --jetstream-workers={{ .Values.jetstreamWorkers }}
{{- end }}
{{- if ne (int .Values.natsclusterWorkers) 16 }}
- --natscluster-workers={{ .Values.natsclusterWorkers }}
{{- end }}
{{- with .Values.serverAnswerTimeout }}
- --server-answer-timeout={{ . }}
{{- end }}
{{- with .Values.routeCertificateRenewBefore }}
- --route-certificate-renew-before={{ . }}
{{- end }}
{{- if .Values.pauseReconciliation }}
- --pause-reconciliation
{{- end }}
{{- range .Values.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{/* Whether the validating webhook is served: not in namespaced mode, whose
RBAC grants nothing cluster-wide (config/namespaced leaves it out too). */}}
{{- define "kubenats.webhook" -}}
{{- if and .Values.webhook.enabled (not .Values.watchNamespaces) }}true{{ end }}
{{- end }}

{{- /*
The Secret holding the metrics endpoint's certificate, when it has one:
metrics.tls.secretName, or kubenats-metrics-tls when cert-manager issues it.
*/ -}}
{{- define "kubenats.metricsTLSSecret" -}}
{{- if .Values.metrics.enabled -}}
{{- with .Values.metrics.tls -}}
{{- if .secretName -}}
{{ .secretName }}
{{- else if (.issuerRef).name -}}
kubenats-metrics-tls
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubenats.metricsCertDir" -}}
/etc/kubenats/metrics-tls
{{- end -}}
