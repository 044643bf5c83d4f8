#!/bin/sh
# The reference solution of sum-orders.
awk -F, 'NR > 1 { total += $3 * $4 } END { print total }' orders.csv > total.txt
