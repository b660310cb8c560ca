#!/usr/bin/env bash
# CI lint job: three checks, each printed as "lint: NAME ok" or "lint: NAME FAILED":
#   format      every C/C++ source outside third_party/ is clang-format clean (.clang-format);
#   tidy        clang-tidy (.clang-tidy's checks) over the runtime's packages (executor/ and relax/ included) and the public API;
#   test-names  unit tests are named after the source they test (tools/ci/check_test_names.py).
# Exit 1 if any failed. Needs clang-format and clang-tidy (tools/setup.sh installs them).
set -uo pipefail
cd "$(dirname "$0")/../.."
failed=0
report() { if [ "$2" -eq 0 ]; then echo "lint: $1 ok"; else echo "lint: $1 FAILED"; failed=1; fi; }

mapfile -t all_sources < <(git ls-files '*.cc' '*.h' '*.c' | grep -v '^third_party/')
out=$(clang-format --dry-run --Werror "${all_sources[@]}" 2>&1)
rc=$?
[ $rc -eq 0 ] || echo "$out" | grep -E '^[^ ]+:[0-9]+:[0-9]+: error' | cut -d: -f1 | sort -u | sed 's/^/  needs clang-format: /'
report format $rc

mapfile -t core < <(git ls-files 'api/*.cc' 'base/*.cc' 'format/*.cc' 'runtime/*.cc' 'backends/*.cc' 'backends/**/*.cc' \
  'serialization/*.cc' 'executor/*.cc' 'graph_executor/*.cc' 'relax/*.cc' 'inspect/*.cc' 'packer/*.cc')
out=$(printf '%s\n' "${core[@]}" |
  xargs -P2 -n4 sh -c 'clang-tidy --quiet "$@" -- -std=c++17 -I. -x c++ -DSORUN_VERSION_STRING=\"lint\" 2>&1' _)
echo "$out" | grep -E '(warning|error):' | head -40
echo "$out" | grep -qE '(warning|error):'
rc=$(( $? == 0 ? 1 : 0 ))
report tidy $rc

python3 tools/ci/check_test_names.py
report test-names $?

exit $failed
