# Inputs of the Floe ECS module. They mirror the parameters of
# deploy/cloudformation/floe.yaml; docs/operations.md explains the choices.

variable "name" {
  description = "Name prefix of every resource (cluster, service, roles, log group, task family)."
  type        = string
  default     = "floe"
}

variable "image" {
  description = "Floe image (make image, pushed to ECR), e.g. 123456789012.dkr.ecr.eu-west-1.amazonaws.com/floe:v1.2.3. Pin a version."
  type        = string
}

variable "cluster_name" {
  description = "Existing ECS cluster to run in (its capacity providers must include capacity_provider). Null creates one."
  type        = string
  default     = null
}

variable "capacity_provider" {
  description = "FARGATE, FARGATE_SPOT, or the name of an EC2 (Auto Scaling group) capacity provider associated with the cluster."
  type        = string
  default     = "FARGATE"
}

variable "cpu_architecture" {
  description = "X86_64 or ARM64; the image must have been built for it."
  type        = string
  default     = "X86_64"
  validation {
    condition     = contains(["X86_64", "ARM64"], var.cpu_architecture)
    error_message = "cpu_architecture must be X86_64 or ARM64."
  }
}

variable "task_cpu" {
  description = "CPU units per task (1024 = 1 vCPU)."
  type        = number
  default     = 2048
}

variable "task_memory" {
  description = "Memory per task in MiB (a valid Fargate combination with task_cpu). Keep memory_budget at most a third of it."
  type        = number
  default     = 4096
}

variable "desired_count" {
  description = "Tasks at creation. Later changes are ignored (autoscaling or `aws ecs update-service --desired-count` own the count)."
  type        = number
  default     = 3
}

variable "vpc_id" {
  description = "VPC of the tasks (DNS support and DNS hostnames on, for Cloud Map)."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets in two or three Availability Zones with routes to Kafka, S3, Secrets Manager and CloudWatch Logs."
  type        = list(string)
}

variable "assign_public_ip" {
  description = "Fargate only: give tasks a public IP (public subnets without NAT)."
  type        = bool
  default     = false
}

variable "admin_ingress_cidrs" {
  description = "CIDRs allowed to reach the admin port 7421 (floe status, /readyz, /v1/status, the Iceberg REST catalog at /iceberg)."
  type        = list(string)
  default     = []
}

variable "admin_source_security_group_ids" {
  description = "Security groups (an internal load balancer, a bastion) allowed to reach the admin port 7421."
  type        = list(string)
  default     = []
}

variable "namespace_id" {
  description = "Existing Cloud Map private DNS namespace id (ns-...) named namespace_name. Null creates namespace_name in the VPC."
  type        = string
  default     = null
}

variable "namespace_name" {
  description = "Private DNS namespace; the join name is <discovery_service_name>.<namespace_name>."
  type        = string
  default     = "floe.internal"
}

variable "discovery_service_name" {
  description = "Cloud Map service name; one A record per running task."
  type        = string
  default     = "floe"
}

variable "bootstrap_expect" {
  description = "cluster.bootstrap_expect: fresh tasks that form the group at the very first start (the first desired_count, at most 8). Ignored once a group exists; never change it afterwards."
  type        = number
  default     = 3
  validation {
    condition     = var.bootstrap_expect >= 1 && var.bootstrap_expect <= 8
    error_message = "bootstrap_expect must be from 1 to 8 (one DNS answer carries at most 8 records)."
  }
}

variable "max_voters" {
  description = "cluster.max_voters (odd). Tasks beyond it are non-voters, promoted when a voter fails."
  type        = number
  default     = 5
  validation {
    condition     = contains([1, 3, 5, 7], var.max_voters)
    error_message = "max_voters must be 1, 3, 5 or 7."
  }
}

variable "drain_timeout_seconds" {
  description = "cluster.drain_timeout and the container's stopTimeout (ECS allows at most 120 s)."
  type        = number
  default     = 60
  validation {
    condition     = var.drain_timeout_seconds >= 5 && var.drain_timeout_seconds <= 120
    error_message = "drain_timeout_seconds must be from 5 to 120."
  }
}

variable "recover_from_backup" {
  description = "Run floe serve --recover: a new, empty group restores from <warehouse>/_floe/state/latest.json. For starting again after losing every task; false on the very first start."
  type        = bool
  default     = false
}

variable "deployment_maximum_percent" {
  description = "Upper bound of running tasks during a deployment (minimum healthy is 100). 200 replaces in one batch; a value allowing one extra task replaces one at a time."
  type        = number
  default     = 200
  validation {
    condition     = var.deployment_maximum_percent > 100 && var.deployment_maximum_percent <= 200
    error_message = "deployment_maximum_percent must be from 101 to 200 (minimum healthy is 100)."
  }
}

variable "efs_file_system_id" {
  description = "Optional EFS file system for the Raft data instead of the task's ephemeral storage (not needed on ECS; see docs/operations.md)."
  type        = string
  default     = null
}

variable "efs_access_point_id" {
  description = "EFS access point with POSIX user 65532; required with efs_file_system_id."
  type        = string
  default     = null
}

variable "kafka_bootstrap_servers" {
  description = "kafka.bootstrap_servers as host:port strings."
  type        = list(string)
}

variable "kafka_tls_enabled" {
  description = "kafka.tls.enabled."
  type        = bool
  default     = true
}

variable "kafka_sasl_mechanism" {
  description = "kafka.sasl.mechanism: null, PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."
  type        = string
  default     = null
  validation {
    condition     = var.kafka_sasl_mechanism == null || contains(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], coalesce(var.kafka_sasl_mechanism, "PLAIN"))
    error_message = "kafka_sasl_mechanism must be null, PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."
  }
}

variable "cluster_tls_ca_secret_arn" {
  description = "Full ARN of the Secrets Manager secret whose string is the cluster CA certificate (ca.pem of floe tls ca create), injected as FLOE_CLUSTER_TLS_CA_PEM. The CA key stays off the tasks."
  type        = string
  validation {
    condition     = can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", var.cluster_tls_ca_secret_arn))
    error_message = "cluster_tls_ca_secret_arn must be the full ARN of a Secrets Manager secret."
  }
}

variable "cluster_tls_cert_secret_arn" {
  description = "Full ARN of the secret holding the node certificate every task presents (floe tls cert create; SAN server.floe), injected as FLOE_CLUSTER_TLS_CERT_PEM."
  type        = string
  validation {
    condition     = can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", var.cluster_tls_cert_secret_arn))
    error_message = "cluster_tls_cert_secret_arn must be the full ARN of a Secrets Manager secret."
  }
}

variable "cluster_tls_key_secret_arn" {
  description = "Full ARN of the secret holding that certificate's private key, injected as FLOE_CLUSTER_TLS_KEY_PEM. Tasks read the three at start: rotating them is a new deployment."
  type        = string
  validation {
    condition     = can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", var.cluster_tls_key_secret_arn))
    error_message = "cluster_tls_key_secret_arn must be the full ARN of a Secrets Manager secret."
  }
}

variable "kafka_sasl_username" {
  description = "kafka.sasl.username."
  type        = string
  default     = ""
}

variable "kafka_sasl_password_secret_arn" {
  description = "Full ARN of the Secrets Manager secret holding kafka.sasl.password (FLOE_KAFKA_SASL_PASSWORD)."
  type        = string
  default     = null
}

variable "kafka_sasl_password_secret_json_key" {
  description = "Key of the password when the secret is JSON (e.g. password); null takes the whole secret string."
  type        = string
  default     = null
}

variable "warehouse_bucket" {
  description = "S3 bucket of the warehouse."
  type        = string
}

variable "warehouse_prefix" {
  description = "Key prefix of the warehouse, without leading or trailing slash. The task role may touch only objects under it."
  type        = string
  default     = "floe"
  validation {
    condition     = length(var.warehouse_prefix) > 0 && !startswith(var.warehouse_prefix, "/") && !endswith(var.warehouse_prefix, "/")
    error_message = "warehouse_prefix must be non-empty, without leading or trailing slash."
  }
}

variable "s3_endpoint_url" {
  description = "warehouse.s3.endpoint for an S3-compatible store; null for Amazon S3."
  type        = string
  default     = null
}

variable "s3_credentials_secret_arn" {
  description = "Optional secret with JSON keys access_key_id and secret_access_key for an S3-compatible store; null uses the task role."
  type        = string
  default     = null
}

variable "glue_databases" {
  description = "Glue databases (glue_database_prefix + namespace) Floe mirrors its tables into (catalogs.glue). Non-empty turns the Glue sync on and grants only these; empty: no Glue."
  type        = list(string)
  default     = []
}

variable "glue_database_prefix" {
  description = "catalogs.glue.database_prefix, put before each namespace to name its Glue database."
  type        = string
  default     = null
}

variable "auth_tokens_secret_arn" {
  description = "Optional secret holding auth.tokens (TOKEN:SCOPE,...), injected as FLOE_AUTH_TOKENS; protects the Iceberg REST catalog on the admin port."
  type        = string
  default     = null
}

variable "secrets_kms_key_arn" {
  description = "Customer managed KMS key of the secrets; null when they use the AWS managed key."
  type        = string
  default     = null
}

variable "tables" {
  description = "FLOE_TABLES: the table mappings (docs/configuration.md), encoded to JSON."
  type        = any
  default     = [{ topic_regex = "^(.+)$", namespace = "kafka", name = "{1}" }]
}

variable "commit_interval" {
  description = "commit_interval."
  type        = string
  default     = "10s"
}

variable "memory_budget" {
  description = "memory_budget: all tables' buffered records on one task (about a third of task_memory)."
  type        = string
  default     = "1GiB"
}

variable "log_level" {
  description = "log.level: debug, info, warn or error."
  type        = string
  default     = "info"
}

variable "log_retention_days" {
  description = "Retention of the CloudWatch log group."
  type        = number
  default     = 30
}

variable "extra_environment" {
  description = "More FLOE_* variables for the container (any field of docs/configuration.md), name => value."
  type        = map(string)
  default     = {}
}

variable "enable_autoscaling" {
  description = "Target tracking on the CloudWatch metric Floe/ConsumerLagSeconds (fed by the metrics sidecar)."
  type        = bool
  default     = false
}

variable "min_capacity" {
  description = "Fewest tasks autoscaling keeps."
  type        = number
  default     = 3
}

variable "max_capacity" {
  description = "Most tasks autoscaling starts (more tasks than partitions only add idle tasks)."
  type        = number
  default     = 12
}

variable "target_lag_seconds" {
  description = "Average consumer lag autoscaling steers to; keep it well above commit_interval."
  type        = number
  default     = 60
}

variable "enable_metrics_sidecar" {
  description = "Add an AWS Distro for OpenTelemetry collector that publishes Floe/ConsumerLagSeconds from Floe's /metrics."
  type        = bool
  default     = false
}

variable "metrics_sidecar_image" {
  description = "The collector image; pin the release you have tested."
  type        = string
  default     = "public.ecr.aws/aws-observability/aws-otel-collector:v0.45.0"
}

variable "tags" {
  description = "Tags of every resource."
  type        = map(string)
  default     = {}
}
