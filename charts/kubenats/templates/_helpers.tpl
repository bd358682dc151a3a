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
{{- with .Values.connectionAllowedCIDRs }}
- --connection-allowed-cidrs={{ join "," . }}
{{- end }}
{{- with .Values.connectionAllowedNamespaces }}
- --connection-allowed-namespaces={{ join "," . }}
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
{{- range .Values.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{/* Whether the validating webhook is served: not in namespaced mode, whose
RBAC grants nothing cluster-wide (config/namespaced leaves it out too). */}}
{{- define "kubenats.webhook" -}}
{{- if and .Values.webhook.enabled (not .Values.watchNamespaces) }}true{{ end }}
{{- end }}
