module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "5.0.0"
}
