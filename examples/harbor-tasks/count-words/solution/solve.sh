#!/bin/sh
# The reference solution of count-words.
wc -w < notes.txt | tr -d ' ' > word-count.txt
