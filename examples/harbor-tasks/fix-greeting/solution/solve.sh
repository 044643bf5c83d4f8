#!/bin/sh
# The reference solution of fix-greeting.
cat > greet.sh <<'SCRIPT'
#!/bin/sh
# Greets the name given as the first argument (the world when none is given).
name=${1:-world}
echo "Hello, $name!"
SCRIPT
