#!/bin/sh
# The verifier of fix-greeting: three cases; the reward is the share that pass (0, 1/3, 2/3, 1),
# written to /logs/verifier/reward.txt.
passed=0
check() {
    expected=$1
    shift
    actual=$(sh greet.sh "$@" 2>/dev/null)
    if [ "$actual" = "$expected" ]; then
        passed=$((passed + 1))
        echo "passed: $expected"
    else
        echo "failed: expected '$expected', got '$actual'"
    fi
}
check "Hello, Ada!" Ada
check "Hello, Grace Hopper!" "Grace Hopper"
check "Hello, world!"
awk -v passed="$passed" 'BEGIN { printf "%.4f\n", passed / 3 }' > /logs/verifier/reward.txt
