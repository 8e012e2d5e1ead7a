#!/usr/bin/env bash
# bash -n on each script, and shellcheck when it is installed (Debian's
# shellcheck package; without it only the syntax is checked, and the test
# says so).
# Usage: check_shell.sh SCRIPT...
set -u
rc=0
for script in "$@"; do
  bash -n "$script" || { echo "check_shell: $script: bash -n failed"; rc=1; }
done
if command -v shellcheck >/dev/null 2>&1; then
  for script in "$@"; do
    (cd "$(dirname "$script")" && shellcheck -x "$(basename "$script")") \
      || { echo "check_shell: $script: shellcheck failed"; rc=1; }
  done
  checked="bash -n and shellcheck"
else
  checked="bash -n only (shellcheck is not installed)"
fi
[ $rc -eq 0 ] && echo "check_shell: $# scripts pass $checked"
exit $rc
