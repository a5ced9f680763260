# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# bench/cpu.sh: exact CPU accounting and CPU placement for benchmarks
# (sourced; used by bench/compare.sh, see docs/BENCHMARKS.md).
#
# /proc/PID/stat: utime and stime are sampled at the tick (HZ=250 here),
# and the kernel rescales the pair so that its sum is the scheduler's
# runtime; but the sum is shown in 10 ms units, covers only the threads of
# the processes one finds (a child that exited during the run is lost),
# and says nothing of where the time was spent.  cgroup v1 cpuacct counts
# the scheduler's runtime (ns) of every task that was ever in the group,
# per CPU.
#
# Each server runs in a group of its own, /sys/fs/cgroup/cpuacct/
# gslbd-bench-NAME: the shell that starts it writes itself into the
# group's cgroup.procs and then execs the server, so the server, all its
# threads and any child it forks are in the group from the first
# instruction.  cg_usage reads cpuacct.usage (ns, all CPUs) and
# cg_percpu cpuacct.usage_percpu; a run's CPU is the difference of two
# reads.
#
# Placement: cg_pin NAME CPU re-pins every task (thread) of the group with
# taskset, so a server that pinned its own threads at start (knotd puts
# its UDP worker on CPU 0) goes where the benchmark wants it;
# usage_percpu then shows where the time of each run really went.
#
# Needs root and cgroup v1's cpuacct controller mounted at $CG_ROOT.

CG_ROOT=${CG_ROOT:-/sys/fs/cgroup/cpuacct}
CG_PREFIX=${CG_PREFIX:-gslbd-bench-}
declare -a CG_MADE=()

cg_dir() { echo "$CG_ROOT/$CG_PREFIX$1"; }

cg_check() {
  [ -w "$CG_ROOT/cgroup.procs" ] && [ -r "$CG_ROOT/cpuacct.usage" ] ||
    { echo "bench: needs root and cgroup v1 cpuacct at $CG_ROOT" >&2; return 1; }
}

# cg_create NAME: a fresh, empty group (an earlier one of the same name,
# left by a killed run, is emptied into the root group and removed).
cg_create() {
  local d t
  d=$(cg_dir "$1")
  if [ -d "$d" ]; then
    while read -r t; do echo "$t" > "$CG_ROOT/cgroup.procs" 2>/dev/null || true; done < "$d/cgroup.procs"
    rmdir "$d" || return 1
  fi
  mkdir "$d" || return 1
  CG_MADE+=("$1")
}

# cg_exec NAME CMD...: exec CMD inside group NAME (for use as the command
# of setsid / a background job).
cg_exec() {
  local d
  d=$(cg_dir "$1"); shift
  echo "$BASHPID" > "$d/cgroup.procs" || return 1
  exec "$@"
}

cg_usage() { cat "$(cg_dir "$1")/cpuacct.usage"; }
cg_percpu() { cat "$(cg_dir "$1")/cpuacct.usage_percpu"; }
cg_tasks() { cat "$(cg_dir "$1")/tasks"; }
cg_procs() { cat "$(cg_dir "$1")/cgroup.procs"; }

# cg_pin NAME CPU: pin every task (thread) of the group to CPU.  Returns
# non-zero if any task still allows another CPU afterwards.
cg_pin() {
  local t a bad=0
  for t in $(cg_tasks "$1"); do
    taskset -p -c "$2" "$t" > /dev/null 2>&1 || true
  done
  for t in $(cg_tasks "$1"); do
    a=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$t/status" 2>/dev/null) || continue
    [ -z "$a" ] || [ "$a" = "$2" ] || { echo "bench: $1 task $t still on CPUs $a" >&2; bad=1; }
  done
  return $bad
}

# The head of an awk program that reads dnsperf's summary: sent, done
# (completed), lost, qps and lat (average latency, s).
DNSPERF_AWK='
    /Queries sent:/      { sent = $3 }
    /Queries completed:/ { done = $3 }
    /Queries lost:/      { lost = $3 }
    /Queries per second:/{ qps = $4 }
    /Average Latency/    { lat = $4 }'

# cg_measure NAME SCPU CCPU RAW DNSPERF-ARGS...: one dnsperf run, in group
# dnsperf (made with cg_create) pinned to CCPU, against the server of
# group NAME, whose tasks are pinned to SCPU; dnsperf's output goes to
# RAW.  Prints "qps,avg_latency_ms,sent,completed,lost,server_cpu_ns,
# server_us_per_query,on_server_cpu,client_cpu_s": the group's
# cpuacct.usage delta over completed queries, and the share of it on
# SCPU (usage_percpu alone, one read before, one after, so both sides
# cover the same interval).  Fails with dnsperf.
cg_measure() {
  local s=$1 scpu=$2 ccpu=$3 raw=$4 u0 u1 p0 p1 c0 c1
  shift 4
  c0=$(cg_usage dnsperf); u0=$(cg_usage "$s"); p0=$(cg_percpu "$s")
  ( cg_exec dnsperf taskset -c "$ccpu" dnsperf "$@" ) > "$raw" 2>&1 < /dev/null || return 1
  u1=$(cg_usage "$s"); p1=$(cg_percpu "$s"); c1=$(cg_usage dnsperf)
  awk -v du=$((u1 - u0)) -v dc=$((c1 - c0)) -v p0="$p0" -v p1="$p1" -v cpu="$scpu" "$DNSPERF_AWK"'
    END {
      n = split(p0, a, " "); split(p1, b, " "); dp = 0
      for (i = 1; i <= n; i++) dp += b[i] - a[i]
      on = dp > 0 ? (b[cpu + 1] - a[cpu + 1]) / dp : 1
      printf "%.0f,%.3f,%d,%d,%d,%.0f,%.4f,%.4f,%.3f\n", qps, lat * 1000, sent, done,
             lost, du, (done > 0 ? du / 1000 / done : 0), on, dc / 1e9
    }' "$raw"
}

# cg_rss_kb NAME: VmRSS summed over the group's processes.
cg_rss_kb() {
  local p v sum=0
  for p in $(cg_procs "$1"); do
    v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || true)
    sum=$((sum + ${v:-0}))
  done
  echo "$sum"
}

# cg_stop NAME: TERM, then after 5 s KILL, every process of the group (all
# were started by this benchmark inside it), then remove the group.
cg_stop() {
  local d p
  d=$(cg_dir "$1")
  [ -d "$d" ] || return 0
  for p in $(cg_procs "$1"); do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 50); do
    [ -z "$(cg_procs "$1")" ] && break
    sleep 0.1
  done
  for p in $(cg_procs "$1"); do kill -KILL "$p" 2>/dev/null || true; done
  for _ in $(seq 20); do
    [ -z "$(cg_procs "$1")" ] && break
    sleep 0.1
  done
  rmdir "$d" 2>/dev/null || echo "bench: could not remove $d" >&2
}

cg_stop_all() {
  local s
  for s in "${CG_MADE[@]}"; do cg_stop "$s"; done
  CG_MADE=()
}
