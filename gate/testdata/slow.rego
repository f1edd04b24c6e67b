# Deliberately expensive: about 10^9 iterations, so it never finishes within
# a test's timeout.
package switchtender.plan

hold contains msg if {
	n := count([1 |
		some i in numbers.range(1, 1000)
		some j in numbers.range(1, 1000)
		some k in numbers.range(1, 1000)
		i + j + k > 0
	])
	msg := sprintf("%d", [n])
}
