#!/bin/bash
# libsorun.so's dynamic interface is the C API and nothing else:
#  - it defines (nm -D --defined-only) only sorun_* functions, the TVM* functions its version script
#    lists, and the linker's own _init/_fini/_edata/_end/__bss_start: no C++ symbol leaks;
#  - every function api/sorun_c.h declares is exported, and every exported sorun_* is declared there;
#  - every TVM* name in the version script is exported and declared in runtime/c_runtime_api.h (the
#    legacy C ABI) or, for TVMFFI* names, in runtime/ffi_c_api.h (the tvm-ffi functions kernels import);
#  - it needs at run time only the libraries the header names (readelf -d NEEDED).
# Usage: exports_test.sh LIBSORUN_SO LIBSORUN_LDS SORUN_C_H C_RUNTIME_API_H FFI_C_API_H
set -euo pipefail

lib=$1
lds=$2
header=$3
c_runtime_api=$4
ffi_c_api=$5
failed=0

fail() {
  echo "FAIL: $*" >&2
  failed=1
}

defined=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
[[ -n "$defined" ]] || fail "nm -D --defined-only $lib printed nothing"

# The TVM names of the version script's global section.
lds_tvm=$(sed -n '/global:/,/local:/p' "$lds" | grep -oE '\bTVM[A-Za-z0-9_]+' | sort -u)
[[ -n "$lds_tvm" ]] || fail "$lds lists no TVM* names"

unexpected=""
for name in $defined; do
  case "$name" in
    sorun_* | _init | _fini | _edata | _end | __bss_start) ;;
    *)
      if ! grep -qx "$name" <<<"$lds_tvm"; then unexpected+="  $name"$'\n'; fi
      ;;
  esac
done
[[ -z "$unexpected" ]] || fail "$lib exports symbols outside the C API:"$'\n'"$unexpected"

declared=$(grep -oE 'SORUN_C_API [^(]*\bsorun_[a-z0-9_]+\(' "$header" | grep -oE 'sorun_[a-z0-9_]+\($' | tr -d '(' |
  sort -u)
[[ $(wc -l <<<"$declared") -ge 20 ]] || fail "found only $(wc -l <<<"$declared") functions in $header"
exported_sorun=$(grep -E '^sorun_' <<<"$defined" || true)
missing=$(comm -23 <(echo "$declared") <(echo "$exported_sorun"))
[[ -z "$missing" ]] || fail "declared in sorun_c.h but not exported: $missing"
undeclared=$(comm -13 <(echo "$declared") <(echo "$exported_sorun"))
[[ -z "$undeclared" ]] || fail "exported but not declared in sorun_c.h: $undeclared"

for name in $lds_tvm; do
  grep -qx "$name" <<<"$defined" || fail "$name is in $lds but not exported"
  case "$name" in
    TVMFFI*)
      grep -qE "SORUN_FFI_DLL .*\b$name\(" "$ffi_c_api" ||
        fail "$name is exported but not declared in runtime/ffi_c_api.h"
      ;;
    *)
      grep -qE "TVM_DLL .*\b$name\(" "$c_runtime_api" ||
        fail "$name is exported but not declared in runtime/c_runtime_api.h"
      ;;
  esac
done

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for so in $needed; do
  case "$so" in
    libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | libdl.so.* | libpthread.so.* | ld-linux*) ;;
    libz.so.1) ;;
    *) fail "$lib needs $so at run time, which api/sorun_c.h does not list" ;;
  esac
done

if [[ $failed -ne 0 ]]; then exit 1; fi
echo "exports_test: $(wc -l <<<"$exported_sorun") sorun_* and $(wc -l <<<"$lds_tvm") TVM* symbols;" \
  "needs: $(echo $needed)"
