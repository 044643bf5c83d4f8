#!/bin/sh
# The verifier of sum-orders: writes /logs/verifier/reward.json with "reward" (1 when total.txt
# holds the total of the original orders.csv, kept here out of the agent's reach, else 0) and
# "number" (1 when total.txt holds a whole number at all).
expected=$(awk -F, 'NR > 1 { total += $3 * $4 } END { print total }' /tests/orders.csv)
actual=$(tr -d ' \n' < total.txt 2>/dev/null)
number=0
case "$actual" in
    ''|*[!0-9]*) ;;
    *) number=1 ;;
esac
reward=0
if [ "$number" = 1 ] && [ "$actual" = "$expected" ]; then
    reward=1
fi
echo "total.txt holds '$actual', expected $expected"
printf '{"reward": %s, "number": %s}\n' "$reward" "$number" > /logs/verifier/reward.json
