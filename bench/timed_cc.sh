#!/usr/bin/env bash
# $CC wrapper for bench/run_export_routes.sh: runs the real compiler (SORUN_REAL_CC, default cc) under
# /usr/bin/time -v, appending its report (peak RSS, wall time) to $SORUN_TIMED_CC_LOG, one block per
# invocation preceded by "### <arguments>". SORUN_CC_VMEM_KIB caps the compiler's virtual memory.
set -u
log="${SORUN_TIMED_CC_LOG:-/tmp/sorun_timed_cc.log}"
echo "### $*" >> "$log"
if [[ -n "${SORUN_CC_VMEM_KIB:-}" ]]; then ulimit -v "$SORUN_CC_VMEM_KIB"; fi
if [[ -x /usr/bin/time ]]; then
  exec /usr/bin/time -v -a -o "$log" "${SORUN_REAL_CC:-cc}" "$@"
fi
exec "${SORUN_REAL_CC:-cc}" "$@"
