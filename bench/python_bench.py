#!/usr/bin/python3
"""The Python module's targets (core/docs/python.md), measured side by side with the chakra CLI in
one run, the two taking turns, medians reported:

  ck.read of the 16x ResNet .et into a nodes DataFrame vs chakra info on it: CPU time, and the
  memory the read adds to the interpreter (peak RSS after, less RSS before) against the file;
  ck.analyze of the 8-rank DLRM Kineto traces vs chakra analyze --json: CPU time.

ck.read is timed in a fresh interpreter each run (a user's first read), ck.analyze in this process
(its CPU time and its children's: it runs the binary), the CLI as a child process. Usage, from the source tree after a native build:

  PYTHONPATH=build/native/native/python bench/python_bench.py [--runs 5] [--work build/bench]
"""

import argparse
import glob
import os
import resource
import statistics
import subprocess
import sys

import chakrakit as ck

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(work):
    start = cpu()
    work()
    return cpu() - start


def cli(argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def read_in_a_fresh_interpreter(trace):
    """(CPU seconds, bytes added) of ck.read(trace).nodes in a new interpreter, as a user's first
    read: the CPU time of the read alone, its peak RSS after the read less its RSS before."""
    code = f"""
import resource
import chakrakit as ck
def status(key):
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key))
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
before, start = status("VmRSS:"), cpu()
nodes = ck.read({trace!r}).nodes
print(cpu() - start, status("VmHWM:") - before)
"""
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench"))
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "native"))
    args = parser.parse_args()
    chakra = os.path.join(args.build, "native", "chakra")
    made = subprocess.run([os.path.join(args.build, "bench", "chakra_bench"), "--copies", "16", "--make-input",
                           "--work", args.work], check=True, capture_output=True, text=True)
    trace = made.stdout.strip()
    size = os.path.getsize(trace)
    kineto = sorted(glob.glob(os.path.join(ROOT, "assets", "examples", "dlrm_8rank", "worker*")))

    read, memory, info, analyze, analyze_cli = [], [], [], [], []
    for _ in range(args.runs):
        seconds, added = read_in_a_fresh_interpreter(trace)
        read.append(seconds)
        memory.append(added)
        info.append(timed(lambda: cli([chakra, "info", trace])))
        analyze.append(timed(lambda: ck.analyze(*kineto)))
        analyze_cli.append(timed(lambda: cli([chakra, "analyze", "--json", *kineto])))
    m = statistics.median
    memory = m(memory)
    print(f"ck.read + nodes DataFrame of {os.path.basename(trace)} ({size / 2**20:.0f} MiB, median of {args.runs}): "
          f"{m(read):.3f} s CPU; chakra info {m(info):.3f} s; ratio {m(read) / m(info):.2f} (target <= 1.5); "
          f"memory added {memory / 2**20:.0f} MiB, {memory / size:.2f}x the file (target <= 1.5)")
    print(f"ck.analyze of the 8-rank DLRM Kineto traces: {m(analyze):.3f} s CPU; chakra analyze --json "
          f"{m(analyze_cli):.3f} s; ratio {m(analyze) / m(analyze_cli):.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
