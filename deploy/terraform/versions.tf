terraform {
  required_version = ">= 1.5"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 5.x: aws_vpc_security_group_*_rule and restart_policy in container definitions.
      version = ">= 5.40, < 7.0"
    }
  }
}
