module "b" {
  source = "./b"
}
