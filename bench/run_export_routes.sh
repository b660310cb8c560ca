#!/usr/bin/env bash
# Serialization: export time and load time of a large blob through the assembly (.incbin) route and the
# C-source route (BlobEmbedding::kCSource), plus the compiler's peak RSS (/usr/bin/time -v through
# bench/timed_cc.sh). One fresh process per route.
#   bench/run_export_routes.sh [MIB ...]        (default: 16 64 256)
# SORUN_CC_VMEM_KIB caps the compiler's virtual memory (default 12 GiB) so the C route cannot take the
# machine down; a capped run is reported as failed with the compiler's message.
source "$(dirname "$0")/bench_common.sh"
bench_build //bench:export_route_driver
bench_header "export routes (serialization)"
sizes=("$@"); [[ ${#sizes[@]} -eq 0 ]] && sizes=(16 64 256)
export SORUN_CC_VMEM_KIB="${SORUN_CC_VMEM_KIB:-12582912}"
echo "| params | route | export s | blob compile: peak RSS (time -v) | blob compile: wall (time -v) | exporter peak RSS | .so MiB | load-to-ready ms (verify off / on) |"
echo "|---|---|---|---|---|---|---|---|"
for mib in "${sizes[@]}"; do
  for route in asm c; do
    log="$OUT_DIR/timed_cc_${route}_${mib}.log"; : > "$log"
    out="$OUT_DIR/export_${route}_${mib}.json"; err="$OUT_DIR/export_${route}_${mib}.err"
    SORUN_TIMED_CC_LOG="$log" CC="$ROOT/bench/timed_cc.sh" "$BIN/bench/export_route_driver" --mib "$mib" --route "$route" \
        > "$out" 2> "$err" || true
    python3 - "$out" "$log" "$route" "$mib" "$err" <<'PY'
import json, re, sys
out, log, route, mib, err = sys.argv[1:6]
lines = open(out).read().strip().splitlines()
d = json.loads(lines[-1]) if lines else None
blocks = [b for b in open(log).read().split("### ") if b.strip()]
blob = [b for b in blocks if "devc." in b.splitlines()[0] and " -c " in " " + b.splitlines()[0] + " "]
rss = wall = "?"
if blob:
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", blob[-1]); rss = f"{int(m.group(1))/1024:.0f} MiB" if m else "?"
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", blob[-1]); wall = m.group(1) if m else "?"
name = "assembly (.incbin)" if route == "asm" else "C source"
if d:
    print(f"| {mib} MiB | {name} | {d['export_s']:.1f} | {rss} | {wall} | {d['exporter_peak_rss_mib']:.0f} MiB | {d['so_mib']:.1f} | "
          f"{d['load_ms']:.3f} / {d['load_verify_ms']:.1f} |")
else:
    why = " ".join(open(err).read().split())[-160:]
    print(f"| {mib} MiB | {name} | FAILED | {rss} at failure | {wall} to failure | | | {why} |")
PY
  done
done
