#!/bin/sh
# Greets the name given as the first argument.
name=$2
echo "Hello $name"
