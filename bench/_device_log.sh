# Sourced by the device_round*.sh scripts: the output folder ($OUT, default
# /tmp/denogpu-out), the log ($OUT/log.txt), `step NAME` to mark a step in it,
# and a header with the date, commit, Deno and GPU (plus $HEADER_EXTRA).
set -uo pipefail
OUT="${OUT:-/tmp/denogpu-out}"
mkdir -p "$OUT"
export XDG_RUNTIME_DIR=/tmp/xdg NO_COLOR=1 && mkdir -p "$XDG_RUNTIME_DIR"
log="$OUT/log.txt"
step() { echo "== $1 ($(date -u +%T))" >> "$log"; }
{
  echo "== date: $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null)${HEADER_EXTRA:+, $HEADER_EXTRA}"
  deno --version | head -1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
} >> "$log" 2>&1
