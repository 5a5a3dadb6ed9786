output "cluster_name" {
  description = "ECS cluster the service runs in."
  value       = local.cluster_name
}

output "service_name" {
  description = "ECS service of the Floe tasks."
  value       = aws_ecs_service.this.name
}

output "join_address" {
  description = "cluster.join of every task; <host>:7421 reaches a task's admin API from inside the VPC."
  value       = local.join_address
}

output "security_group_id" {
  description = "Security group of the tasks: allow it into Kafka's (and, with EFS, the file system's) group."
  value       = aws_security_group.service.id
}

output "task_role_arn" {
  description = "Role Floe runs as (warehouse prefix, Glue databases)."
  value       = aws_iam_role.task.arn
}

output "execution_role_arn" {
  description = "Role ECS starts tasks with (image, logs, secrets)."
  value       = aws_iam_role.execution.arn
}

output "log_group_name" {
  description = "CloudWatch log group of the Floe containers."
  value       = aws_cloudwatch_log_group.floe.name
}

output "warehouse_location" {
  description = "warehouse.location of every task."
  value       = local.warehouse
}
