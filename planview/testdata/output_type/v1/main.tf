# An output whose value stays ["a", "b"] while its type changes, from a
# list to a tuple: the plan updates it, and its JSON rendering shows the
# same value on both sides.
output "zones" {
  value = tolist(["a", "b"])
}
