#!/usr/bin/env bash
# npm run setup: installs the system tools the tests run, where it can. Debian or Ubuntu
# packages: mona (the LTLf differential test), z3 (the native solver backend), chromium (the
# dashboard's browser test), nginx (replicas behind a proxy), python3 (mentor pull's PyPI
# source and its stand-in pip, and the venv below). With root or password-less sudo it runs
# apt-get; otherwise it prints what to install and exits 1. Then it makes the venv of the Python
# `openai` client the tool_choice test runs (test/server/tool-choice.test.ts), pinned in
# test/server/python/requirements.txt, under the user's cache (~/.cache/mentor/venvs/openai-VERSION).
# `--dry-run` prints the commands instead of running them.
# A test whose tool is missing fails naming this command (MENTOR_SKIP_MISSING_TOOLS=1 skips it).
set -euo pipefail

dry_run=false
[ "${1:-}" = "--dry-run" ] && dry_run=true

# The same places the tests look (test/support/system-tools.ts and the tests that use it).
found_nginx() {
  local candidate
  for candidate in /usr/sbin/nginx /usr/local/sbin/nginx /usr/bin/nginx; do
    [ -x "$candidate" ] && return 0
  done
  command -v nginx >/dev/null 2>&1
}
missing=()
command -v mona >/dev/null 2>&1 || missing+=(mona)
command -v z3 >/dev/null 2>&1 || missing+=(z3)
[ -x "${MENTOR_CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
found_nginx || missing+=(nginx)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
# Debian's python3 makes venvs only with python3-venv (ensurepip).
command -v python3 >/dev/null 2>&1 && ! python3 -c 'import ensurepip, venv' 2>/dev/null && missing+=(python3-venv)

# The venv of the Python openai client, as test/support/python-openai.ts looks for it.
make_venv() {
  local line spec="" version venv
  while IFS= read -r line; do
    case "$line" in openai==*) spec=$line ;; esac
  done <"${0%/*}/../test/server/python/requirements.txt"
  version=${spec#openai==}
  venv="${XDG_CACHE_HOME:-${HOME:-}/.cache}/mentor/venvs/openai-$version"
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('openai') == '$version'" 2>/dev/null; then
    echo "setup: the Python openai client ($version) is in $venv"
    return 0
  fi
  echo "setup: python3 -m venv $venv && pip install $spec"
  $dry_run && return 0
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "$spec"
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: every tool the tests use is installed (mona, z3, chromium, nginx, python3)"
  make_venv
  exit 0
fi
echo "setup: missing: ${missing[*]}"

if [ "$EUID" -eq 0 ]; then
  sudo_cmd=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo_cmd=(sudo)
else
  sudo_cmd=()
  cannot="not root, and sudo needs a password or is absent"
fi
command -v apt-get >/dev/null 2>&1 || cannot="no apt-get (not Debian or Ubuntu)"

if [ -n "${cannot:-}" ]; then
  echo "setup: cannot install here ($cannot). Install these packages with your system's package manager:"
  echo "  ${missing[*]}"
  echo "or run the tests without them: MENTOR_SKIP_MISSING_TOOLS=1 npm test (their tests are skipped, saying why)"
  exit 1
fi

commands=(
  "${sudo_cmd[*]+${sudo_cmd[*]} }env DEBIAN_FRONTEND=noninteractive apt-get update"
  "${sudo_cmd[*]+${sudo_cmd[*]} }env DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}"
)
for command in "${commands[@]}"; do
  echo "setup: $command"
  $dry_run || $command
done
make_venv
