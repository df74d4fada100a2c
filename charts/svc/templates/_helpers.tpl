{{/* Names: `<release>-svc`, cut to 63 characters; fullnameOverride replaces it. */}}
{{- define "svc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* `<fullname>-<suffix>` within 63 characters. */}}
{{- define "svc.child" -}}
{{- $suffix := printf "-%s" .suffix }}
{{- printf "%s%s" (include "svc.fullname" .root | trunc (int (sub 63 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of one component (server, operator, postgresql, system-update). */}}
{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "svc.componentLabels" -}}
{{ include "svc.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "svc.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "svc.operatorServiceAccount" -}}
{{- if .Values.operator.serviceAccount.create }}
{{- default (include "svc.child" (dict "root" . "suffix" "operator")) .Values.operator.serviceAccount.name }}
{{- else }}
{{- required "operator.serviceAccount.name is required when operator.serviceAccount.create is false" .Values.operator.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret and key holding DATABASE_URL: yours, or the bundled Postgres's. */}}
{{- define "svc.databaseSecret" -}}
{{- if .Values.database.existingSecret }}
{{- .Values.database.existingSecret }}
{{- else if .Values.postgresql.enabled }}
{{- include "svc.child" (dict "root" . "suffix" "postgresql") }}
{{- else }}
{{- fail "svc: no database: set database.existingSecret to a Secret holding DATABASE_URL (a postgres:// connection string), or postgresql.enabled=true for a trial Postgres" }}
{{- end }}
{{- end }}

{{- define "svc.databaseSecretKey" -}}
{{- if .Values.database.existingSecret }}{{ .Values.database.existingSecretKey }}{{ else }}DATABASE_URL{{ end }}
{{- end }}

{{- define "svc.adminTokenSecret" -}}
{{- default (include "svc.child" (dict "root" . "suffix" "admin-token")) .Values.auth.adminToken.existingSecret }}
{{- end }}

{{- define "svc.adminTokenKey" -}}
{{- if .Values.auth.adminToken.existingSecret }}{{ .Values.auth.adminToken.existingSecretKey }}{{ else }}token{{ end }}
{{- end }}

{{/*
  The server's environment, shared by the server Deployment and the system-update hook Job. Not the
  admin token: a pre-install hook runs before the release's Secrets exist, and system update needs none.
*/}}
{{- define "svc.serverEnv" -}}
- name: PORT
  value: {{ .Values.server.port | quote }}
{{- if and .Values.postgresql.enabled .Values.postgresql.existingSecret (not .Values.database.existingSecret) }}
{{- /* The password is in a Secret of the user's: the URL has none, and pg reads PGPASSWORD for it. */}}
- name: DATABASE_URL
  value: {{ printf "postgres://%s@%s:5432/%s" .Values.postgresql.username (include "svc.child" (dict "root" . "suffix" "postgresql")) .Values.postgresql.database | quote }}
- name: PGPASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.postgresql.existingSecret }}
      key: {{ .Values.postgresql.existingSecretKey }}
{{- else }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "svc.databaseSecret" . }}
      key: {{ include "svc.databaseSecretKey" . }}
{{- end }}
- name: SVC_DB_POOL_SIZE
  value: {{ .Values.database.poolSize | quote }}
- name: SEARCH_BACKEND
  value: {{ .Values.search.backend | quote }}
{{- if eq .Values.search.backend "opensearch" }}
- name: OPENSEARCH_URL
  value: {{ required "svc: search.opensearch.url is required when search.backend is opensearch" .Values.search.opensearch.url | quote }}
- name: ELASTICSEARCH_INDEX_BUILDER_NUM_SHARDS
  value: {{ .Values.search.opensearch.shards | quote }}
- name: ELASTICSEARCH_INDEX_BUILDER_NUM_REPLICAS
  value: {{ .Values.search.opensearch.replicas | quote }}
{{- end }}
{{- with .Values.search.opensearch.indexPrefix }}
- name: INDEX_PREFIX
  value: {{ . | quote }}
{{- end }}
- name: SVC_AUTH_ENABLED
  value: {{ .Values.auth.enabled | quote }}
- name: SVC_WORKERS
  value: {{ .Values.server.workers | quote }}
- name: SVC_LOG_LEVEL
  value: {{ .Values.server.logLevel | quote }}
- name: ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE
  value: {{ .Values.systemUpdate.structuredProperties | quote }}
- name: ELASTICSEARCH_INDEX_BUILDER_MAPPINGS_REINDEX
  value: {{ .Values.systemUpdate.reindexMappings | quote }}
- name: SVC_DATA_DIR
  value: /tmp/svc-data
{{- with .Values.server.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The server's pod: volumes (a writable /tmp on a read-only root) and scheduling, shared with the Job. */}}
{{- define "svc.serverPodCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.server.podSecurityContext | nindent 2 }}
volumes:
  - name: tmp
    emptyDir: {}
{{- with .Values.server.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.server.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.server.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "svc.adminTokenEnv" -}}
- name: SVC_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "svc.adminTokenSecret" . }}
      key: {{ include "svc.adminTokenKey" . }}
{{- end }}
