# init fails: a module source that does not exist.
module "missing" {
  source = "./does-not-exist"
}
