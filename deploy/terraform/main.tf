# Floe on Amazon ECS: the same deployment as deploy/cloudformation/floe.yaml, as a
# Terraform module. The reasoning behind each choice is in the CloudFormation template's
# comments and in docs/operations.md; the comments here only point at it.

data "aws_region" "current" {}
data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

locals {
  region     = data.aws_region.current.name
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition

  is_fargate     = contains(["FARGATE", "FARGATE_SPOT"], var.capacity_provider)
  create_cluster = var.cluster_name == null
  cluster_name   = local.create_cluster ? aws_ecs_cluster.this[0].name : var.cluster_name
  namespace_id   = var.namespace_id == null ? aws_service_discovery_private_dns_namespace.this[0].id : var.namespace_id
  join_address   = "${var.discovery_service_name}.${var.namespace_name}:7422"
  warehouse      = "s3://${var.warehouse_bucket}/${var.warehouse_prefix}"
  use_efs        = var.efs_file_system_id != null
  # Exactly the secrets the task definition injects: the internal TLS set always, the
  # others when given. The execution role may read these and no other.
  tls_secret_arns = [var.cluster_tls_ca_secret_arn, var.cluster_tls_cert_secret_arn, var.cluster_tls_key_secret_arn]
  secret_arns     = concat(local.tls_secret_arns, compact([var.kafka_sasl_password_secret_arn, var.s3_credentials_secret_arn, var.auth_tokens_secret_arn]))

  # The container's configuration: FLOE_* variables (docs/configuration.md). node.id is
  # left to default to the task's host name; the listeners bind all interfaces and Floe
  # advertises the task's own address.
  environment = concat(
    [
      { name = "FLOE_NODE_DATA_DIR", value = "/var/lib/floe" },
      { name = "FLOE_NODE_RAFT_ADDR", value = "0.0.0.0:7420" },
      { name = "FLOE_NODE_ADMIN_ADDR", value = "0.0.0.0:7421" },
      { name = "FLOE_NODE_RPC_ADDR", value = "0.0.0.0:7422" },
      # The internal ports bind beyond loopback, so Floe requires cluster.tls: its PEM
      # comes from the secrets below (the image has no shell to write files).
      { name = "FLOE_CLUSTER_JOIN", value = local.join_address },
      { name = "FLOE_CLUSTER_BOOTSTRAP_EXPECT", value = tostring(var.bootstrap_expect) },
      { name = "FLOE_CLUSTER_MAX_VOTERS", value = tostring(var.max_voters) },
      { name = "FLOE_CLUSTER_DRAIN_TIMEOUT", value = "${var.drain_timeout_seconds}s" },
      { name = "FLOE_KAFKA_BOOTSTRAP_SERVERS", value = join(",", var.kafka_bootstrap_servers) },
      { name = "FLOE_KAFKA_TLS_ENABLED", value = tostring(var.kafka_tls_enabled) },
      { name = "FLOE_WAREHOUSE_LOCATION", value = local.warehouse },
      { name = "FLOE_WAREHOUSE_S3_REGION", value = local.region },
      { name = "FLOE_TABLES", value = jsonencode(var.tables) },
      { name = "FLOE_COMMIT_INTERVAL", value = var.commit_interval },
      { name = "FLOE_MEMORY_BUDGET", value = var.memory_budget },
      { name = "FLOE_LOG_FORMAT", value = "json" },
      { name = "FLOE_LOG_LEVEL", value = var.log_level },
    ],
    var.kafka_sasl_mechanism == null ? [] : [
      { name = "FLOE_KAFKA_SASL_MECHANISM", value = var.kafka_sasl_mechanism },
      { name = "FLOE_KAFKA_SASL_USERNAME", value = var.kafka_sasl_username },
    ],
    var.s3_endpoint_url == null ? [] : [
      { name = "FLOE_WAREHOUSE_S3_ENDPOINT", value = var.s3_endpoint_url },
    ],
    length(var.glue_databases) == 0 ? [] : [
      { name = "FLOE_CATALOGS_GLUE_ENABLED", value = "true" },
      { name = "FLOE_CATALOGS_GLUE_REGION", value = local.region },
    ],
    var.glue_database_prefix == null ? [] : [
      { name = "FLOE_CATALOGS_GLUE_DATABASE_PREFIX", value = var.glue_database_prefix },
    ],
    [for k, v in var.extra_environment : { name = k, value = v }],
  )

  secrets = concat(
    # cluster.tls.ca_pem, cert_pem, key_pem: read once at start, so rotating them is a
    # new deployment (a rolling restart); deploy/README.md.
    [
      { name = "FLOE_CLUSTER_TLS_CA_PEM", valueFrom = var.cluster_tls_ca_secret_arn },
      { name = "FLOE_CLUSTER_TLS_CERT_PEM", valueFrom = var.cluster_tls_cert_secret_arn },
      { name = "FLOE_CLUSTER_TLS_KEY_PEM", valueFrom = var.cluster_tls_key_secret_arn },
    ],
    var.kafka_sasl_password_secret_arn == null ? [] : [{
      name = "FLOE_KAFKA_SASL_PASSWORD"
      valueFrom = var.kafka_sasl_password_secret_json_key == null ? var.kafka_sasl_password_secret_arn : (
      "${var.kafka_sasl_password_secret_arn}:${var.kafka_sasl_password_secret_json_key}::")
    }],
    var.s3_credentials_secret_arn == null ? [] : [
      { name = "FLOE_WAREHOUSE_S3_ACCESS_KEY_ID", valueFrom = "${var.s3_credentials_secret_arn}:access_key_id::" },
      { name = "FLOE_WAREHOUSE_S3_SECRET_ACCESS_KEY", valueFrom = "${var.s3_credentials_secret_arn}:secret_access_key::" },
    ],
    var.auth_tokens_secret_arn == null ? [] : [
      { name = "FLOE_AUTH_TOKENS", valueFrom = var.auth_tokens_secret_arn },
    ],
  )

  floe_container = {
    name                   = "floe"
    image                  = var.image
    essential              = true
    command                = var.recover_from_backup ? ["serve", "--recover"] : ["serve"]
    user                   = "65532:65532"
    readonlyRootFilesystem = true
    portMappings = [
      { name = "raft", containerPort = 7420, protocol = "tcp" },
      { name = "admin", containerPort = 7421, protocol = "tcp" },
      { name = "rpc", containerPort = 7422, protocol = "tcp" },
    ]
    mountPoints = [{ sourceVolume = "raft-data", containerPath = "/var/lib/floe", readOnly = false }]
    environment = local.environment
    secrets     = local.secrets
    # SIGTERM drains; SIGKILL follows after stopTimeout = cluster.drain_timeout.
    stopTimeout = var.drain_timeout_seconds
    # Readiness (joined a group with a leader): gates deployments and DNS. The long
    # retry window rides out elections without marking every task unhealthy.
    healthCheck = {
      command     = ["CMD", "/floe", "health", "--admin-addr", "127.0.0.1:7421"]
      interval    = 15
      timeout     = 5
      retries     = 10
      startPeriod = 180
    }
    # A crash restarts in place (same node id, address and Raft data); exit 0 is the
    # end of a drain and stops the task.
    restartPolicy = { enabled = true, ignoredExitCodes = [0], restartAttemptPeriod = 60 }
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        "awslogs-group"         = aws_cloudwatch_log_group.floe.name
        "awslogs-region"        = local.region
        "awslogs-stream-prefix" = "floe"
        "mode"                  = "non-blocking"
        "max-buffer-size"       = "25m"
      }
    }
  }

  # Publishes Floe/ConsumerLagSeconds (dimension FloeService = var.name) from Floe's
  # Prometheus gauge floe_consumer_lag_seconds: worst partition of the task.
  metrics_container = {
    name              = "metrics"
    image             = var.metrics_sidecar_image
    essential         = false
    memoryReservation = 64
    environment = [{
      name = "AOT_CONFIG_CONTENT"
      value = yamlencode({
        receivers = {
          prometheus = {
            config = {
              scrape_configs = [{
                job_name        = "floe"
                scrape_interval = "30s"
                metrics_path    = "/metrics"
                static_configs  = [{ targets = ["127.0.0.1:7421"] }]
              }]
            }
          }
        }
        processors = {
          metricstransform = {
            transforms = [{
              include    = "floe_consumer_lag_seconds"
              match_type = "strict"
              action     = "insert"
              new_name   = "ConsumerLagSeconds"
              operations = [
                { action = "aggregate_labels", label_set = [], aggregation_type = "max" },
                { action = "add_label", new_label = "FloeService", new_value = var.name },
              ]
            }]
          }
          filter = { metrics = { include = { match_type = "strict", metric_names = ["ConsumerLagSeconds"] } } }
          batch  = { timeout = "30s" }
        }
        exporters = {
          awsemf = {
            namespace               = "Floe"
            log_group_name          = "/ecs/${var.name}/metrics"
            region                  = local.region
            dimension_rollup_option = "NoDimensionRollup"
            metric_declarations     = [{ dimensions = [["FloeService"]], metric_name_selectors = ["ConsumerLagSeconds"] }]
          }
        }
        service = {
          pipelines = {
            metrics = {
              receivers  = ["prometheus"]
              processors = ["metricstransform", "filter", "batch"]
              exporters  = ["awsemf"]
            }
          }
        }
      })
    }]
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        "awslogs-group"         = aws_cloudwatch_log_group.floe.name
        "awslogs-region"        = local.region
        "awslogs-stream-prefix" = "metrics"
      }
    }
  }
}

# ------------------------------------------------------------------ cluster and logs

resource "aws_ecs_cluster" "this" {
  count = local.create_cluster ? 1 : 0
  name  = var.name
  setting {
    name  = "containerInsights"
    value = "enabled"
  }
  tags = var.tags
}

resource "aws_ecs_cluster_capacity_providers" "this" {
  count              = local.create_cluster ? 1 : 0
  cluster_name       = aws_ecs_cluster.this[0].name
  capacity_providers = distinct(concat(["FARGATE", "FARGATE_SPOT"], local.is_fargate ? [] : [var.capacity_provider]))
}

resource "aws_cloudwatch_log_group" "floe" {
  name              = "/ecs/${var.name}/floe"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_cloudwatch_log_group" "metrics" {
  count             = var.enable_metrics_sidecar ? 1 : 0
  name              = "/ecs/${var.name}/metrics"
  retention_in_days = 7
  tags              = var.tags
}

# ------------------------------------------------------------------ discovery
# One A record per task; DNS answers carry the healthy tasks, or up to eight unhealthy
# ones when none is healthy (the first start): the join list of every task.

resource "aws_service_discovery_private_dns_namespace" "this" {
  count       = var.namespace_id == null ? 1 : 0
  name        = var.namespace_name
  vpc         = var.vpc_id
  description = "Floe peers of ${var.name}"
  tags        = var.tags
}

resource "aws_service_discovery_service" "this" {
  name = var.discovery_service_name
  dns_config {
    namespace_id   = local.namespace_id
    routing_policy = "MULTIVALUE"
    dns_records {
      type = "A"
      ttl  = 10
    }
  }
  health_check_custom_config {
    failure_threshold = 1
  }
  tags = var.tags
}

# ------------------------------------------------------------------ network
# Raft (7420) and internal gRPC (7422) only between tasks of this group; admin (7421)
# only from the given CIDRs and security groups.

resource "aws_security_group" "service" {
  name_prefix = "${var.name}-"
  description = "Floe tasks of ${var.name}"
  vpc_id      = var.vpc_id
  tags        = var.tags
  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_vpc_security_group_egress_rule" "all" {
  security_group_id = aws_security_group.service.id
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
  description       = "Kafka and AWS APIs"
}

resource "aws_vpc_security_group_ingress_rule" "peers" {
  for_each                     = { raft = 7420, rpc = 7422 }
  security_group_id            = aws_security_group.service.id
  referenced_security_group_id = aws_security_group.service.id
  ip_protocol                  = "tcp"
  from_port                    = each.value
  to_port                      = each.value
  description                  = "Floe ${each.key}, between tasks only"
}

resource "aws_vpc_security_group_ingress_rule" "admin_cidr" {
  for_each          = toset(var.admin_ingress_cidrs)
  security_group_id = aws_security_group.service.id
  cidr_ipv4         = each.value
  ip_protocol       = "tcp"
  from_port         = 7421
  to_port           = 7421
  description       = "Floe admin API for operators"
}

resource "aws_vpc_security_group_ingress_rule" "admin_sg" {
  for_each                     = toset(var.admin_source_security_group_ids)
  security_group_id            = aws_security_group.service.id
  referenced_security_group_id = each.value
  ip_protocol                  = "tcp"
  from_port                    = 7421
  to_port                      = 7421
  description                  = "Floe admin API from a load balancer or bastion"
}

# ------------------------------------------------------------------ IAM
# Execution role: what ECS uses to start a task (image, logs, the secrets it injects).
# Task role: what Floe uses (the warehouse prefix, the Glue databases).

data "aws_iam_policy_document" "assume_ecs_tasks" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}

resource "aws_iam_role" "execution" {
  name_prefix        = "${var.name}-exec-"
  assume_role_policy = data.aws_iam_policy_document.assume_ecs_tasks.json
  tags               = var.tags
}

data "aws_iam_policy_document" "execution" {
  statement {
    actions   = ["ecr:GetAuthorizationToken"]
    resources = ["*"]
  }
  statement {
    actions   = ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"]
    resources = ["arn:${local.partition}:ecr:*:*:repository/*"]
  }
  statement {
    actions = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = concat(
      ["${aws_cloudwatch_log_group.floe.arn}:*"],
      [for g in aws_cloudwatch_log_group.metrics : "${g.arn}:*"],
    )
  }
  statement {
    actions   = ["secretsmanager:GetSecretValue"]
    resources = local.secret_arns
  }
  dynamic "statement" {
    for_each = var.secrets_kms_key_arn != null ? [1] : []
    content {
      actions   = ["kms:Decrypt"]
      resources = [var.secrets_kms_key_arn]
      condition {
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["secretsmanager.${local.region}.amazonaws.com"]
      }
    }
  }
}

resource "aws_iam_role_policy" "execution" {
  name   = "pull-log-secrets"
  role   = aws_iam_role.execution.id
  policy = data.aws_iam_policy_document.execution.json
}

resource "aws_iam_role" "task" {
  name_prefix        = "${var.name}-task-"
  assume_role_policy = data.aws_iam_policy_document.assume_ecs_tasks.json
  tags               = var.tags
}

data "aws_iam_policy_document" "task" {
  statement {
    actions   = ["s3:ListBucket"]
    resources = ["arn:${local.partition}:s3:::${var.warehouse_bucket}"]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = [var.warehouse_prefix, "${var.warehouse_prefix}/*"]
    }
  }
  statement {
    actions   = ["s3:GetBucketLocation"]
    resources = ["arn:${local.partition}:s3:::${var.warehouse_bucket}"]
  }
  statement {
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
    resources = ["arn:${local.partition}:s3:::${var.warehouse_bucket}/${var.warehouse_prefix}/*"]
  }
  dynamic "statement" {
    for_each = length(var.glue_databases) > 0 ? [1] : []
    content {
      actions = ["glue:GetDatabase", "glue:CreateDatabase", "glue:GetTable", "glue:CreateTable", "glue:UpdateTable"]
      resources = concat(
        ["arn:${local.partition}:glue:${local.region}:${local.account_id}:catalog"],
        [for db in var.glue_databases : "arn:${local.partition}:glue:${local.region}:${local.account_id}:database/${db}"],
        [for db in var.glue_databases : "arn:${local.partition}:glue:${local.region}:${local.account_id}:table/${db}/*"],
      )
    }
  }
  dynamic "statement" {
    for_each = local.use_efs ? [1] : []
    content {
      actions   = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]
      resources = ["arn:${local.partition}:elasticfilesystem:${local.region}:${local.account_id}:file-system/${var.efs_file_system_id}"]
      condition {
        test     = "StringEquals"
        variable = "elasticfilesystem:AccessPointArn"
        values   = ["arn:${local.partition}:elasticfilesystem:${local.region}:${local.account_id}:access-point/${var.efs_access_point_id}"]
      }
    }
  }
  dynamic "statement" {
    for_each = aws_cloudwatch_log_group.metrics
    content {
      actions   = ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"]
      resources = ["${statement.value.arn}:*"]
    }
  }
}

resource "aws_iam_role_policy" "task" {
  name   = "warehouse-glue"
  role   = aws_iam_role.task.id
  policy = data.aws_iam_policy_document.task.json
}

# ------------------------------------------------------------------ task definition

resource "aws_ecs_task_definition" "this" {
  family                   = var.name
  network_mode             = "awsvpc"
  requires_compatibilities = [local.is_fargate ? "FARGATE" : "EC2"]
  cpu                      = tostring(var.task_cpu)
  memory                   = tostring(var.task_memory)
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.task.arn

  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = var.cpu_architecture
  }

  # Raft log and snapshots: the task's own storage (lives as long as the task, survives
  # container restarts), or EFS.
  volume {
    name = "raft-data"
    dynamic "efs_volume_configuration" {
      for_each = local.use_efs ? [1] : []
      content {
        file_system_id     = var.efs_file_system_id
        transit_encryption = "ENABLED"
        authorization_config {
          access_point_id = var.efs_access_point_id
          iam             = "ENABLED"
        }
      }
    }
  }

  container_definitions = jsonencode(concat(
    [local.floe_container],
    var.enable_metrics_sidecar ? [local.metrics_container] : [],
  ))

  tags = var.tags
}

# ------------------------------------------------------------------ service
# Minimum healthy 100: an old task stops only after its replacement is HEALTHY (joined
# the group); stopping tasks drain and leave one Raft configuration change at a time.
# See the quorum note in deploy/cloudformation/floe.yaml and docs/operations.md.

resource "aws_ecs_service" "this" {
  name                               = var.name
  cluster                            = local.cluster_name
  task_definition                    = aws_ecs_task_definition.this.arn
  desired_count                      = var.desired_count
  platform_version                   = local.is_fargate ? "LATEST" : null
  deployment_minimum_healthy_percent = 100
  deployment_maximum_percent         = var.deployment_maximum_percent
  enable_ecs_managed_tags            = true
  propagate_tags                     = "SERVICE"

  capacity_provider_strategy {
    capacity_provider = var.capacity_provider
    weight            = 1
    base              = 0
  }

  network_configuration {
    subnets          = var.subnet_ids
    security_groups  = [aws_security_group.service.id]
    assign_public_ip = local.is_fargate ? var.assign_public_ip : false
  }

  deployment_circuit_breaker {
    enable   = true
    rollback = true
  }

  service_registries {
    registry_arn = aws_service_discovery_service.this.arn
  }

  dynamic "ordered_placement_strategy" {
    for_each = local.is_fargate ? [] : ["attribute:ecs.availability-zone", "instanceId"]
    content {
      type  = "spread"
      field = ordered_placement_strategy.value
    }
  }

  # After creation the count belongs to autoscaling (or to update-service).
  lifecycle {
    ignore_changes = [desired_count]
  }

  depends_on = [aws_vpc_security_group_ingress_rule.peers, aws_ecs_cluster_capacity_providers.this]
  tags       = var.tags
}

# ------------------------------------------------------------------ autoscaling

resource "aws_appautoscaling_target" "this" {
  count              = var.enable_autoscaling ? 1 : 0
  service_namespace  = "ecs"
  scalable_dimension = "ecs:service:DesiredCount"
  resource_id        = "service/${local.cluster_name}/${aws_ecs_service.this.name}"
  min_capacity       = var.min_capacity
  max_capacity       = var.max_capacity
}

resource "aws_appautoscaling_policy" "lag" {
  count              = var.enable_autoscaling ? 1 : 0
  name               = "${var.name}-consumer-lag"
  policy_type        = "TargetTrackingScaling"
  service_namespace  = aws_appautoscaling_target.this[0].service_namespace
  scalable_dimension = aws_appautoscaling_target.this[0].scalable_dimension
  resource_id        = aws_appautoscaling_target.this[0].resource_id

  target_tracking_scaling_policy_configuration {
    target_value       = var.target_lag_seconds
    scale_out_cooldown = 120
    scale_in_cooldown  = 900
    customized_metric_specification {
      namespace   = "Floe"
      metric_name = "ConsumerLagSeconds"
      statistic   = "Average"
      unit        = "Seconds"
      dimensions {
        name  = "FloeService"
        value = var.name
      }
    }
  }
}
