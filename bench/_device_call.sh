# Sourced first by the device_round*.sh scripts, each one call of the `device` tool: prepares the GPU machine
# (.device/setup.sh, its line in $OUT/setup.txt), the Vulkan backend the README advises, and the call's time budget:
# S (the start), B (env BUDGET, else the script's default, $1), `left [MARGIN]` (seconds the budget leaves, less MARGIN,
# default 5) and `cap N` (N seconds, or what the budget leaves if less).
source .device/setup.sh > "$OUT/setup.txt" 2>&1
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1 DENO_WEBGPU_BACKEND=vulkan
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
S=$(date +%s)
B=${BUDGET:-${1:-570}}
left() { echo $(( B - ($(date +%s) - S) - ${1:-5} )); }
cap() { local l=$(( B - ($(date +%s) - S) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
