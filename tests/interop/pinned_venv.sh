# Sourced by the installers of the pinned TVM venvs (install_tvm.sh: TVM 0.16, install_tvm027.sh: TVM
# 0.27): the one implementation of "a venv OUTSIDE the repository holding exactly the pinned wheels".
# The caller sets TAG (its name in messages), T0 (start time) and HERE, then calls:
#   venv_path VENV                    -> absolute VENV (refused inside the repository)
#   install_pinned_venv VENV PY PYVER REQ STAMP_NAME CHECK_PY WHEELS_DESC
# which is idempotent (a venv whose stamp matches the pins and that passes CHECK_PY is left alone), holds
# a lock per venv, installs with pip --no-deps --only-binary=:all: -r REQ, runs pip check and CHECK_PY.
# Exit codes (through skip/fail): 0 installed / up to date; 3 = cannot be installed here ("skipped:
# <reason>" on the last line of stdout); 1 = installed but broken.

skip() { echo "$TAG: skipped: $*"; echo "skipped: $*"; exit 3; }
fail() { echo "$TAG: FAILED: $*" >&2; exit 1; }
elapsed() { python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$T0" "$(date +%s.%N)"; }

venv_path() {
  local venv=$1 root
  case "$venv" in
    /*) ;;
    *) venv="$(pwd)/$venv" ;;
  esac
  root=$(cd "$HERE/../.." && pwd)
  case "$venv/" in
    "$root"/*) fail "the venv must live outside the repository (got $venv)" ;;
  esac
  echo "$venv"
}

install_pinned_venv() {
  local venv=$1 py=$2 pyver=$3 req=$4 stamp_name=$5 check=$6 wheels=$7
  local stamp_want stamp ver log reason
  stamp_want="$(sha256sum "$req" | cut -d' ' -f1) python $pyver"
  stamp="$venv/$stamp_name"
  mkdir -p "$(dirname "$venv")" || skip "cannot create $(dirname "$venv")"
  exec 9>"$venv.lock" || skip "cannot write $venv.lock"
  flock 9  # one installer at a time per venv

  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_want" ] && ver=$("$venv/bin/python" -c "$check" 2>/dev/null); then
    echo "$TAG: up to date: $venv ($ver, python $pyver, $(elapsed) s)"
    exit 0
  fi
  if [ -e "$venv" ]; then
    [ -f "$venv/pyvenv.cfg" ] || fail "$venv exists and is not a venv; refusing to replace it"
    echo "$TAG: replacing stale venv $venv"
    rm -rf "$venv"
  fi
  echo "$TAG: creating $venv with $py (Python $pyver)"
  "$py" -m venv "$venv" || skip "python -m venv failed for $py"

  log="$venv.pip.log"
  # --no-deps: every package of the venv is in the pin list; pip check below proves the set is complete.
  if ! "$venv/bin/pip" install --no-deps --only-binary=:all: --progress-bar off -q -r "$req" >"$log" 2>&1; then
    reason=$(grep -E "ERROR|error:" "$log" | tail -1)
    rm -rf "$venv"
    skip "pip could not install the pinned wheels ($wheels or a dependency unavailable, or PyPI unreachable): ${reason:-see $log}"
  fi
  "$venv/bin/pip" check >>"$log" 2>&1 || fail "pip check: the pinned set is inconsistent (see $log)"
  ver=$("$venv/bin/python" -c "$check" 2>>"$log") || fail "the installed TVM does not import (see $log)"
  echo "$stamp_want" >"$stamp"
  echo "$TAG: installed $venv ($ver, python $pyver, $(elapsed) s)"
  exit 0
}
