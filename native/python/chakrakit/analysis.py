"""chakrakit.analyze: chakra analyze's results under HolisticTraceAnalysis' names and columns, so
that an HTA notebook ports by changing its import and constructor (core/docs/python.md has the
table of calls and where the figures differ)."""

import os
import warnings

import numpy as np
import pandas as pd

from ._commands import ChakraError, run_json

_KINDS = ("COMPUTATION", "COMMUNICATION", "MEMORY")


def _no_plots(visualize):
    if visualize:
        warnings.warn("visualize=True: chakrakit draws no plots; the DataFrame returned has the figures "
                      "(DataFrame.plot draws them)", stacklevel=3)


def _percent(part, whole, digits):
    return round(100.0 * part / whole, digits) if whole else 0.0


class Analysis:
    """The analyses of a run's traces (Kineto traces or .et traces with measured times), one
    `chakra analyze` over them. `ranks` lists the ranks read; `json` is the CLI's --json output.
    Times are µs, as in HTA."""

    def __init__(self, paths, options, data):
        self.paths = paths
        self._options = options
        self._launches = None
        self.json = data
        self._by_rank = {r["rank"]: r for r in data["ranks"]}
        self.ranks = sorted(self._by_rank)
        self.notes = data.get("notes", [])

    def __repr__(self):
        return f"<chakrakit.Analysis of {len(self.ranks)} ranks {self.ranks}>"

    def _chosen(self, ranks):
        if ranks is None:
            return [self.ranks[0]]  # HTA's default: rank 0 (the lowest here)
        missing = [r for r in ranks if r not in self._by_rank]
        if missing:
            raise ValueError(f"no rank {missing} in this analysis (ranks: {self.ranks})")
        return list(ranks)

    def get_temporal_breakdown(self, visualize=False):
        """Per rank: idle, compute and non-compute time over the GPU span (µs and %)."""
        _no_plots(visualize)
        rows = []
        for r in self.ranks:
            a = self._by_rank[r]
            span = a["span"]
            rows.append(
                {
                    "rank": r,
                    "idle_time(us)": a["idle"],
                    "compute_time(us)": a["compute"],
                    "non_compute_time(us)": a["non_compute"],
                    "kernel_time(us)": span,
                    "idle_time_pctg": _percent(a["idle"], span, 2),
                    "compute_time_pctg": _percent(a["compute"], span, 2),
                    "non_compute_time_pctg": _percent(a["non_compute"], span, 2),
                }
            )
        return pd.DataFrame(rows)

    def get_comm_comp_overlap(self, visualize=False):
        """Per rank: the share of communication-kernel time that computation kernels overlap."""
        _no_plots(visualize)
        return pd.DataFrame(
            {"rank": self.ranks, "comp_comm_overlap_pctg": [round(self._by_rank[r]["overlap_percent"], 2) for r in self.ranks]}
        )

    def get_gpu_kernel_breakdown(self, visualize=False, duration_ratio=0.8, num_kernels=10, include_memory_kernels=True):
        """(kernel_type_df, kernel_metrics_df) as HTA: time per kernel type and per set of types
        running together (over all ranks), and per rank and type the kernels by total time,
        those past `num_kernels` or past the `duration_ratio` quantile of the running total
        summed into one row named "others"."""
        _no_plots(visualize)
        kinds = _KINDS if include_memory_kernels else _KINDS[:2]
        by_label = {}
        for r in self.ranks:
            for label, micros in self._by_rank[r]["by_kinds"].items():
                kept = " overlapping ".join(k for k in label.split(" overlapping ") if k in kinds)
                if kept:
                    by_label[kept] = by_label.get(kept, 0) + micros
        types = pd.DataFrame({"kernel_type": list(by_label), "sum": list(by_label.values())})
        types = types.sort_values("sum", ascending=False, ignore_index=True, kind="stable")
        total = types["sum"].sum()
        types["percentage"] = (100.0 * types["sum"] / total if total else 0.0).round(1)

        frames = []
        for r in self.ranks:
            names = pd.DataFrame(self._by_rank[r]["names"])
            if names.empty:
                continue
            for kind in kinds:
                top = names[names["kind"] == kind].sort_values("sum", ascending=False, ignore_index=True, kind="stable")
                if top.empty:
                    continue
                table = top[["name", "sum", "max", "min", "stddev", "mean"]].copy()
                if len(table) > num_kernels:
                    cumulative = table["sum"].cumsum()
                    cut = cumulative.quantile(duration_ratio)
                    past = (cumulative > cut) | (table.index >= num_kernels)
                    kept, rest = table[~past], table[past]
                    sums = rest["sum"]
                    others = {
                        "name": "others",
                        "sum": sums.sum(),
                        "max": sums.max(),
                        "min": sums.min(),
                        "stddev": sums.std() if len(sums) > 1 else 0.0,
                        "mean": sums.mean(),
                    }
                    table = pd.concat([kept, pd.DataFrame([others])], ignore_index=True)
                table["kernel_type"] = kind
                table["rank"] = r
                frames.append(table)
        metrics = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["name", "sum"])
        metrics = metrics.sort_values(["kernel_type", "name", "rank"], ignore_index=True)
        metrics = metrics.rename(columns={"sum": "sum (us)", "max": "max (us)", "min": "min (us)", "mean": "mean (us)"})
        return types, metrics[["name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "kernel_type", "rank"]]

    def get_idle_time_breakdown(
        self, ranks=None, streams=None, visualize=False, consecutive_kernel_delay=30, show_idle_interval_stats=False
    ):
        """Per rank and stream, the GPU's idle time split into host_wait, kernel_wait (gaps
        shorter than 30 µs) and other, with each category's share of the stream's idle time; with
        `show_idle_interval_stats`, also (count, mean) of the gaps of each category."""
        _no_plots(visualize)
        if consecutive_kernel_delay != 30:
            raise ValueError("consecutive_kernel_delay: chakra analyze splits kernel waits at 30 µs, HTA's default; "
                             "other values are not supported")
        rows, stats = [], []
        for r in self._chosen(ranks):
            for s in self._by_rank[r]["idle_by_stream"]:
                if streams is not None and s["stream"] not in streams:
                    continue
                idle = s["host_wait"] + s["kernel_wait"] + s["other"]
                for category in ("host_wait", "kernel_wait", "other"):
                    rows.append(
                        {
                            "rank": r,
                            "stream": s["stream"],
                            "idle_category": category,
                            "idle_time": s[category],
                            "idle_time_ratio": round(s[category] / idle, 2) if idle else 0.0,
                        }
                    )
                    gaps = s[category + "_gaps"]
                    stats.append(
                        {
                            "rank": r,
                            "stream": s["stream"],
                            "idle_category": category,
                            "count": gaps,
                            "mean": s[category] / gaps if gaps else np.nan,
                        }
                    )
        table = pd.DataFrame(rows)
        return (table, pd.DataFrame(stats)) if show_idle_interval_stats else table

    def get_cuda_kernel_launch_stats(self, ranks=None, runtime_cutoff=50, launch_delay_cutoff=100, visualize=False):
        """Per rank, one row per GPU op whose launch is known: the launch call's duration
        (cpu_duration), the op's (gpu_duration), and launch_delay as HTA computes it (the op's
        start less the call's start, plus the call's duration); `delay_after_call` is the time
        from the call's end to the op's start (what HTA's name suggests). `id` and `name` are the
        op's (Kineto's correlation id is not kept)."""
        _no_plots(visualize)
        if self._launches is None:  # every launch: asked for when needed, the list is long
            data = run_json("analyze", *self.paths, json=True, launches=True, **self._options)
            self._launches = {rank["rank"]: rank["launch_list"] for rank in data["ranks"]}
        out = {}
        for r in self._chosen(ranks):
            launches = self._launches[r]
            out[r] = pd.DataFrame(
                {
                    "id": [l["id"] for l in launches],
                    "name": pd.Categorical([l["name"] for l in launches]),
                    "cpu_duration": [l["cpu_duration"] for l in launches],
                    "gpu_duration": [l["gpu_duration"] for l in launches],
                    "launch_delay": [max(0, l["since_call"] + l["cpu_duration"]) for l in launches],
                    "delay_after_call": [l["delay"] for l in launches],
                }
            )
        return out

    def get_potential_stragglers(self, num_candidates=2):
        """The ranks that waited least for the others in collectives (they arrived last), most
        likely first; chakra analyze's stragglers table has the evidence (straggler_table)."""
        ranks = sorted(self.json["stragglers"]["ranks"], key=lambda r: (r["waited"], r["rank"]))
        return [r["rank"] for r in ranks[:num_candidates]]

    def straggler_table(self):
        """Per rank: collective instances it arrived last at, the skew it made others wait, and
        how long it waited for others (µs)."""
        return pd.DataFrame(self.json["stragglers"]["ranks"])

    def collectives(self):
        """Collectives of every rank by type and power-of-two size: count, bytes, time (µs) and
        nccl-tests' algorithm and bus bandwidths (GB/s)."""
        return pd.DataFrame(self.json["collectives"])

    def host_stalls(self):
        """Host stalls per rank as chakra analyze lists them (empty when none were found)."""
        rows = []
        for r in self.ranks:
            for s in self._by_rank[r].get("host_stalls", {}).get("stalls", []):
                rows.append({"rank": r, **s})
        return pd.DataFrame(rows)

    def diff(self, test):
        """This run (the control) against `test` (another Analysis, or a trace or folder), per
        rank and name as ck.diff gives it; each side must be one trace or one folder."""
        test_paths = test.paths if isinstance(test, Analysis) else (test,)
        if len(self.paths) != 1 or len(test_paths) != 1:
            raise ValueError("diff compares one trace or folder with another: analyze a folder (trace_dir=) to diff runs")
        return diff(self.paths[0], test_paths[0])

    def critical_path_analysis(self, what_if=None):
        """The critical path across the ranks on their measured times: one row per step (rank,
        node, kind, how it was reached, start and duration in µs, share of the step). With
        what_if="NAME=K", `estimated_step` in the frame's attrs is the step along this path with
        those ops K times faster."""
        data = run_json("analyze", *self.paths, json=True, critical_path=True, what_if=what_if, **self._options)
        path = data["critical_path"]
        steps = pd.DataFrame(path.get("steps", []))
        steps.attrs.update({k: v for k, v in path.items() if k != "steps"})
        if "what_if" in data:
            steps.attrs["what_if"] = data["what_if"]
        return steps


def analyze(*paths, trace_dir=None, trace_files=None, include_last_profiler_step=False, **options):
    """Analyses of the traces under `paths` (files or folders; Kineto or .et). HTA's constructor's
    arguments are taken as HTA takes them: trace_dir (a folder), trace_files (rank -> file, under
    trace_dir when given; each file's stated rank is checked against it). Other keyword arguments
    are chakra analyze's options."""
    if include_last_profiler_step:
        raise ValueError("include_last_profiler_step=True: chakra analyze leaves out the last ProfilerStep of a "
                         "trace with two or more, as HTA does by default; keeping it is not supported")
    base = os.fspath(trace_dir) if trace_dir is not None else None
    if trace_files is not None:
        paths += tuple(os.path.join(base or "", os.fspath(f)) for f in trace_files.values())
    elif base is not None:
        paths += (base,)
    if not paths:
        raise TypeError("analyze: give the traces (files or folders, or trace_dir=)")
    analysis = Analysis(paths, options, run_json("analyze", *paths, json=True, **options))
    for rank, file in (trace_files or {}).items():
        stated = next(r["rank"] for r in analysis.json["ranks"] if os.path.samefile(r["file"], os.path.join(base or "", file)))
        if stated != rank:
            raise ChakraError(f"{file}: trace_files gives it rank {rank}, but the trace is rank {stated}")
    return analysis


def diff(control, test, **options):
    """chakra diff of two runs (traces or folders): per rank and name, counts and total time in
    each and the difference, as HTA's TraceDiff.compare_traces."""
    data = run_json("diff", control, test, json=True, **options)
    rows = []
    for rank in data["ranks"]:
        for n in rank.get("names", []):
            rows.append({"rank": rank["rank"], **n})
    table = pd.DataFrame(rows)
    table.attrs["notes"] = data.get("notes", [])
    return table
