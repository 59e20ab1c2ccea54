#!/usr/bin/env bash
# Checks the system packages a command needs (tools/setup/debian-packages.txt)
# and names the one command that installs what is missing.
#   check_system.sh GROUP...            fails when a `build` package is
#                                       missing, warns for the other groups
#   check_system.sh --install GROUP...  installs what is missing (as root; CI)
# Off Debian and Ubuntu (no dpkg), only the build tools are looked for.
set -euo pipefail
list="$(dirname "$0")/debian-packages.txt"
install=0
if [ "${1:-}" = "--install" ]; then
  install=1
  shift
fi
groups=" $* "

if ! command -v dpkg >/dev/null; then
  absent=()
  for tool in cmake ninja cc c++ make python3; do
    command -v "$tool" >/dev/null || absent+=("$tool")
  done
  if [ ${#absent[@]} -gt 0 ]; then
    echo "corealloc needs these tools, which are not on PATH: ${absent[*]}" >&2
    exit 1
  fi
  exit 0
fi

missing_build=() missing_other=()
while read -r package group command; do
  case "$package" in ''|'#'*) continue ;; esac
  [[ "$groups" == *" $group "* ]] || continue
  dpkg -s "$package" >/dev/null 2>&1 && continue
  if [ -n "$command" ] && { command -v "$command" >/dev/null || [ -x "$HOME/.cargo/bin/$command" ]; }; then
    continue
  fi
  if [ "$group" = build ]; then missing_build+=("$package"); else missing_other+=("$package"); fi
done < "$list"

missing=("${missing_build[@]}" "${missing_other[@]}")
[ ${#missing[@]} -eq 0 ] && exit 0
if [ $install = 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
command="sudo apt-get install ${missing[*]}"
if [ ${#missing_build[@]} -gt 0 ]; then
  echo "corealloc cannot build without: ${missing_build[*]}" >&2
  echo "install what is missing with: $command" >&2
  exit 1
fi
echo "note: not installed: ${missing_other[*]} (the tests or benchmarks that use them are left out)" >&2
echo "      to have them all: $command" >&2
