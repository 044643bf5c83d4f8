#!/bin/sh
# The verifier of count-words: reward 1 when word-count.txt holds the number of words of the
# original notes.txt (kept here, out of the agent's reach) and notes.txt is unchanged, else 0.
expected=$(wc -w < /tests/notes.txt | tr -d ' \n')
actual=$(tr -d ' \n' < word-count.txt 2>/dev/null)
if [ -n "$actual" ] && [ "$actual" = "$expected" ] && cmp -s notes.txt /tests/notes.txt; then
    echo "word-count.txt holds $expected: passed"
    echo 1 > /logs/verifier/reward.txt
else
    echo "word-count.txt holds '$actual', expected $expected (or notes.txt changed): failed"
    echo 0 > /logs/verifier/reward.txt
fi
