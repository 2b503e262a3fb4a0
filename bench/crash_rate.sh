#!/usr/bin/env bash
# Runs the test suite (or the given files) N times on one WebGPU backend and counts native aborts:
# runs that died of a signal (exit 134 SIGABRT, 139 SIGSEGV, or any 128+n) or printed a glibc heap
# message ("double free", "malloc_consolidate", "corrupted size", "free(): invalid", ...) on stderr,
# apart from runs that merely failed tests.
#
#   N=30 BACKEND=vulkan bench/crash_rate.sh                      # whole suite, 30 runs
#   N=50 BACKEND=gl bench/crash_rate.sh tests/stream/ tests/soak/  # only these files or folders
#   N=100 BACKEND=gl CMD="deno test --allow-ffi tests/known_issues/egl_thread_exit_repro.ts -- egl" \
#     bench/crash_rate.sh                                         # any command
#
# Environment:
#   N        runs (default 30)
#   BACKEND  value for DENO_WEBGPU_BACKEND: vulkan, gl, or empty to leave it unset, which makes Deno start
#            every backend, GL (EGL) included, even when it picks Vulkan (default vulkan)
#   CMD      command to run instead of the test task (the file arguments are then ignored)
#   LOGDIR   where each run's output is kept (default: a new folder under /tmp); runs that aborted
#            or failed keep their log, passing ones are deleted unless KEEP=1
#   NICE     niceness for each run (default 10)
#   CORES    1 to allow core dumps (ulimit -c unlimited): a run that dumps one keeps it beside its log as
#            run_<i>.core (needs kernel.core_pattern to be a plain file name such as "core"; the core lands
#            in the crashing process's working directory: the repository root, or CORE_DIR for a CMD that
#            changes directory). Read one with: gdb -batch -ex 'thread apply all bt' "$(which deno)" run_<i>.core
# Prints one line per run ("run 3/30: exit 134 SIGABRT, 'double free or corruption (out)', tests ok, 68s")
# and a summary "N runs, K native aborts (signals ...), F test failures, backend B". A Rust panic
# ("panicked at") counts as native too.
# Exit status: 0 when no run aborted natively, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

n="${N:-30}"
backend="${BACKEND-vulkan}"
nice_level="${NICE:-10}"
logdir="${LOGDIR:-$(mktemp -d /tmp/crash-rate.XXXXXX)}"
mkdir -p "$logdir"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d /tmp/denogpu-xdg.XXXXXX)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
export DENO_NO_UPDATE_CHECK=1 NO_COLOR=1
if ! command -v deno >/dev/null 2>&1 && [ -x .tools/node_modules/.bin/deno ]; then
  export PATH="$PWD/.tools/node_modules/.bin:$PATH"
fi
if [ -n "$backend" ]; then export DENO_WEBGPU_BACKEND="$backend"; else unset DENO_WEBGPU_BACKEND; fi

if [ -n "${CMD:-}" ]; then
  cmd=(bash -c "$CMD")
elif [ "$#" -gt 0 ]; then
  cmd=(deno test --v8-flags=--expose-gc --allow-env --allow-read --allow-write "$@")
else
  cmd=(deno task test)
fi

glibc_re='double free|malloc_consolidate|corrupted size|corrupted double-linked|free\(\): invalid|malloc\(\): |munmap_chunk|realloc\(\): invalid|free\(\): corrupted|unaligned tcache|tcache_thread|panicked at'
echo "crash_rate: $(deno --version | head -1), backend ${backend:-default}, $n runs of: ${cmd[*]}"
echo "crash_rate: logs in $logdir"

core_dir="${CORE_DIR:-.}"
if [ "${CORES:-0}" = 1 ]; then
  ulimit -c unlimited
  rm -f "$core_dir"/core "$core_dir"/core.[0-9]*
fi
aborts=0
failures=0
declare -A signals=()
for i in $(seq 1 "$n"); do
  log="$logdir/run_$i.log"
  start=$(date +%s)
  nice -n "$nice_level" "${cmd[@]}" >"$log" 2>&1
  status=$?
  secs=$(($(date +%s) - start))
  summary="$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^(ok|FAILED) \| [0-9]+ passed' | tail -1)"
  glibc="$(grep -aoE "($glibc_re)[^\"']*" "$log" | head -1 | cut -c1-80)"
  tests="no test summary"
  [ -n "$summary" ] && tests="tests ${summary%% |*}"
  native=0
  sig=""
  if [ "$status" -gt 128 ]; then
    native=1
    sig="$(kill -l $((status - 128)) 2>/dev/null || echo "$((status - 128))")"
    sig="SIG$sig"
  elif [ -n "$glibc" ]; then
    native=1
    sig="glibc-message"
  fi
  line="run $i/$n: exit $status"
  [ -n "$sig" ] && line+=" $sig"
  [ -n "$glibc" ] && line+=", '$glibc'"
  line+=", $tests, ${secs}s"
  if [ "${CORES:-0}" = 1 ]; then
    for c in "$core_dir"/core "$core_dir"/core.[0-9]*; do
      if [ -f "$c" ]; then mv "$c" "$logdir/run_$i.core" && line+=", core kept"; fi
    done
  fi
  echo "$line"
  if [ "$native" -eq 1 ]; then
    aborts=$((aborts + 1))
    signals[$sig]=$((${signals[$sig]:-0} + 1))
  else
    if [ "$status" -ne 0 ]; then
      failures=$((failures + 1))
    elif [ "${KEEP:-0}" != 1 ]; then
      rm -f "$log"
    fi
  fi
done

sigs=""
for s in "${!signals[@]}"; do sigs+="${sigs:+, }$s x${signals[$s]}"; done
echo "$n runs, $aborts native aborts (signals ${sigs:-none}), $failures test failures, backend ${backend:-default}"
[ "$aborts" -eq 0 ]
