#!/usr/bin/env bash
# Target 2 (peak memory): one FRESH process per scenario (bench/memory_driver): peak RSS (VmHWM) after
# load + first run against params + activations + 32 MiB, for sorun's own (aligned, used in place)
# libraries and foreign ones whose params must be copied (synthetic unaligned libraries, the real TVM
# 0.16 exports when present), checksum verification on and off. Then N=4 concurrent processes on the
# same library: summed PSS shows the weight pages are shared (file-backed) or not (copied).
#   bench/run_memory.sh            SORUN_BENCH_MODEL_DIR: where generated models live
source "$(dirname "$0")/bench_common.sh"
bench_build //bench:memory_driver //bench:gen_model //testdata/models:big256
bench_header "memory_driver (target 2)"
MD="${SORUN_BENCH_MODEL_DIR:-/tmp/sorun_bench_models}"; mkdir -p "$MD"
TVM_DIR="${SORUN_TVM_ARTIFACTS:-/opt/tvm-research/artifacts/hhb}"
JSONL="$OUT_DIR/memory.jsonl"; : > "$JSONL"

model() {  # model MIB LAYOUT -> path (generated once)
  local p="$MD/dense_${1}mib_${2}.so"
  [[ -s "$p" ]] || "$BIN/bench/gen_model" --mib "$1" --layout "$2" -o "$p" >&2
  echo "$p"
}

scenario() {  # scenario LABEL MODEL VERIFY
  "$BIN/bench/memory_driver" --label "$1" --model "$2" --verify "$3" >> "$JSONL"
}

for mib in 256 1024; do
  for layout in aligned foreign; do
    p="$(model "$mib" "$layout")"
    for v in 0 1; do scenario "dense ${mib} MiB ${layout}" "$p" "$v"; done
  done
done
scenario "zoo big256.so" "$BIN/testdata/models/big256.so" 1
for m in resnet18 mobilenet; do
  [[ -f "$TVM_DIR/${m}_deploy.so" ]] && scenario "TVM 0.16 ${m}_deploy.so" "$TVM_DIR/${m}_deploy.so" 1
done

python3 - "$JSONL" <<'PY'
import json, sys
print("| scenario | verify | params MiB (in place / copied tensors) | activations MiB | peak RSS MiB (VmHWM) | RSS after run: anon / file MiB | limit MiB (params+act+32) | peak - (params+act) MiB | pass |")
print("|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    d = json.loads(line); r = d["after_first_run"]
    print(f"| {d['label']} | {'on' if d['verify'] else 'off'} | {d['params_mib']:.1f} ({d['params_in_place']} / {d['params_copied']}) | "
          f"{d['activations_mib']:.2f} | {d['peak_mib']:.1f} | {r['rss_anon_mib']:.1f} / {r['rss_file_mib']:.1f} | {d['limit_mib']:.1f} | "
          f"{d['peak_over_params_act_mib']:.1f} | {'PASS' if d['peak_ok'] else 'FAIL'} |")
PY

# N concurrent processes on one library, all holding it mapped after their first run: summed PSS,
# summed RssAnon (private copies, exact) and the machine's AnonPages growth (/proc/meminfo; other
# processes add noise). Kernels with CONFIG_NO_PAGE_MAPCOUNT (6.15+) only estimate PSS for large page
# cache folios, so RssAnon/AnonPages are the exact evidence there.
pss() {  # pss LABEL MODEL N
  local hold="$OUT_DIR/hold.$$"; rm -f "$hold" "$hold".ready.*
  local anon_before; anon_before=$(awk '/^AnonPages/{print $2}' /proc/meminfo)
  local pids=()
  for i in $(seq "$3"); do
    "$BIN/bench/memory_driver" --label "$1" --model "$2" --verify 0 --hold "$hold" > "$OUT_DIR/pss.$i.json" & pids+=($!)
  done
  while [[ $(ls "$hold".ready.* 2>/dev/null | wc -l) -lt $3 ]]; do sleep 0.1; done
  local anon_during; anon_during=$(awk '/^AnonPages/{print $2}' /proc/meminfo)
  touch "$hold"; wait "${pids[@]}"
  python3 - "$1" "$3" "$anon_before" "$anon_during" "$OUT_DIR"/pss.*.json <<'PY'
import json, sys
label, n, ab, ad = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ds = [json.loads(open(f).read()) for f in sys.argv[5:5 + n]]
p = ds[0]["params_mib"]
rss = sum(d["held"]["rss_mib"] for d in ds); pss = sum(d["held"]["pss_mib"] for d in ds)
anon = sum(d["held"]["rss_anon_mib"] for d in ds)
print(f"| {label} | {n} | {p:.1f} | {rss:.1f} | {pss:.1f} | {anon:.1f} | {(ad - ab)/1024:.0f} |")
PY
  rm -f "$hold" "$hold".ready.* "$OUT_DIR"/pss.*.json
}
echo
echo "| library | processes | params MiB | sum of RSS MiB | sum of PSS MiB | sum of RssAnon MiB (private copies) | machine AnonPages growth MiB |"
echo "|---|---|---|---|---|---|---|"
pss "dense 256 MiB aligned (in place)" "$(model 256 aligned)" 4
pss "dense 256 MiB foreign (copied)" "$(model 256 foreign)" 4
[[ -f "$TVM_DIR/resnet18_deploy.so" ]] && pss "TVM 0.16 resnet18_deploy.so (copied)" "$TVM_DIR/resnet18_deploy.so" 4
exit 0
