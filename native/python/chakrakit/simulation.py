"""chakrakit.simulate and chakrakit.sweep: chakra simulate's and chakra sweep's results as
DataFrames."""

import json
import os
import tempfile

import pandas as pd

from ._commands import run


class Simulation:
    """One chakra simulate run. `npus` (per NPU: finish, step, compute, communication, exposed
    communication..., in ns), `collectives` (per collective type), `network` (per dimension:
    messages, bytes, busy time, busy share per NPU), `links` (per link, congestion-aware runs),
    for replays of measured traces `measured_collectives` (measured vs simulated medians) and
    `profiler_steps`; `makespan_ns`, `what_if` (with what_if=), `summary` (the CLI's text) and
    `json` (everything, as chakra simulate --json writes it)."""

    def __init__(self, data, summary, notes):
        self.json = data
        self.summary = summary
        self.notes = notes
        self.makespan_ns = data["makespan_ns"]
        self.deadlock = data["deadlock"]
        self.what_if = data.get("what_if")
        npus = data.get("npus", [])
        self.npus = pd.DataFrame(
            [{"npu": i, **{k: v for k, v in n.items() if not isinstance(v, (list, dict))}} for i, n in enumerate(npus)]
        )
        self.collectives = pd.DataFrame(
            [{"comm_type": t, **v} for t, v in data.get("collectives", {}).items()]
        )
        self.measured_collectives = pd.DataFrame(data.get("measured_collectives", []))
        network = data.get("network", {})
        self.network = pd.DataFrame(
            [{"dim": d, **v} for d, v in enumerate(network.get("dimensions", []))]
        )
        self.links = pd.DataFrame(network.get("links", []))
        self.profiler_steps = pd.DataFrame(
            [{"npu": i, **s} for i, n in enumerate(npus) for s in n.get("profiler_steps", [])]
        )

    def __repr__(self):
        state = "deadlocked" if self.deadlock else f"makespan {self.makespan_ns} ns"
        return f"<chakrakit.Simulation of {len(self.npus)} NPUs: {state}>"


def simulate(workload, system=None, network=None, preset=None, slowdown=None, what_if=None, **options):
    """Simulates the per-NPU traces `workload` (PREFIX of PREFIX.N.et, or a folder) on a system
    JSON and network YAML, or on a `preset` cluster (assets/simulation/presets.json).
    `slowdown` ("npu=3:compute=1.5;dim=1:bandwidth=0.5" or a file) and `what_if` ("NAME=K")
    as chakra simulate's options; other keyword arguments are its other options (npus=,
    backend=, stalls=, comm_group=, ...)."""
    with tempfile.TemporaryDirectory(prefix="chakrakit-") as scratch:
        out = os.path.join(scratch, "simulation.json")
        printed = run(
            "simulate",
            workload=workload,
            system=system,
            network=network,
            preset=preset,
            slowdown=slowdown,
            what_if=what_if,
            json=out,
            **options,
        )
        with open(out, encoding="utf-8") as f:
            data = json.load(f)
    return Simulation(data, printed.text, printed.notes)


def sweep(spec, jobs=None, **options):
    """Runs every point of a sweep spec (a YAML file; core/docs/sweeps.md) and returns the table
    as a DataFrame, a row per point (its axis values, step time, compute, exposed
    communication, network load...; `error` says why a point failed). Progress is shown while
    it runs; an interrupt stops it. Keyword arguments are chakra sweep's options."""
    with tempfile.TemporaryDirectory(prefix="chakrakit-") as scratch:
        results = os.path.join(scratch, "results")
        run("sweep", spec, output=results, jobs=jobs, quiet=False, **options)
        rows = []
        with open(results + ".jsonl", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rows.append(json.loads(line))
    return pd.json_normalize(rows, sep=".")
