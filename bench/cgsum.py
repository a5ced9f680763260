# SPDX-License-Identifier: MIT
"""bench/cgsum.py: the summary tables shared by bench/compare.sh and
bench/dnssec.sh, from their results.csv (one row per run: server,
workload, placement, run, ..., server_us_per_query, on_server_cpu,
client_cpu_s).  A figure is per placement the median of the runs, then
the mean of the placements."""
import csv
import statistics


def order(xs, ref):
    return sorted(set(xs), key=lambda x: ref.index(x) if x in ref else 99)


def fmt(x, d=2):
    return "—" if x is None else "%.*f" % (d, x)


class Runs:
    def __init__(self, path, servers, workloads):
        self.rows = list(csv.DictReader(open(path)))
        rows = self.rows
        self.servers = order([r["server"] for r in rows], servers)
        self.wls = order([r["workload"] for r in rows], workloads)
        self.places = order([r["placement"] for r in rows], ["0:1", "1:0"])
        self.nruns = max(int(r["run"]) for r in rows)
        self.runs = {}
        for r in rows:
            self.runs.setdefault((r["server"], r["workload"], r["placement"]), []).append(r)

    def med(self, s, w, p, col="server_us_per_query"):
        v = [float(r[col]) for r in self.runs.get((s, w, p), [])]
        return statistics.median(v) if v else None

    def per_query(self, s, w):  # mean over placements of the median of the runs
        m = [self.med(s, w, p) for p in self.places]
        return sum(m) / len(m) if m and None not in m else None

    def per_run(self, client_cpu=True):
        """The per-run table and the note on servers off their CPU."""
        print("Per run (µs per query, in run order), median and spread ((max − min) ÷ median) "
              "per placement; lowest share of the server's CPU time spent on its own CPU; "
              "median qps, lost queries (all runs)%s:" % (" and median dnsperf CPU" if client_cpu else ""))
        print()
        print("| server | workload | placement | runs (µs) | median (µs) | spread | on its CPU (min) "
              "| qps | lost |%s" % (" dnsperf CPU (s) |" if client_cpu else ""))
        print("|---|---|---|---|--:|--:|--:|--:|--:|" + ("--:|" if client_cpu else ""))
        for w in self.wls:
            for s in self.servers:
                for p in self.places:
                    rr = self.runs.get((s, w, p))
                    if not rr:
                        continue
                    v = [float(r["server_us_per_query"]) for r in rr]
                    m = statistics.median(v)
                    print("| %s | %s | %s | %s | %.2f | %.0f %% | %.1f %% | %.0f | %.0f |%s" % (
                        s, w, p, " ".join("%.2f" % x for x in v), m,
                        100 * (max(v) - min(v)) / m if m else 0,
                        100 * min(float(r["on_server_cpu"]) for r in rr),
                        self.med(s, w, p, "qps"), sum(float(r["lost"]) for r in rr),
                        " %.2f |" % self.med(s, w, p, "client_cpu_s") if client_cpu else ""))
        esc = [r for r in self.rows if float(r["on_server_cpu"]) < 0.99]
        print()
        if esc:
            print("**Warning:** in %d run(s) a server spent more than 1 %% of its CPU time "
                  "off its CPU: %s" % (len(esc), ", ".join(
                      "%s/%s/%s run %s (%.1f %%)" % (r["server"], r["workload"], r["placement"],
                                                     r["run"], 100 * float(r["on_server_cpu"]))
                      for r in esc)))
        else:
            print("Every server spent at least 99 % of its CPU time on its own CPU in every run.")
