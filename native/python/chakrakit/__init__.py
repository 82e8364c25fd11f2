"""chakrakit: Chakra execution traces in Python, on chakrakit's C++ core.

    import chakrakit as ck
    trace = ck.read("run/rank.0.et")          # nodes, dependencies, attributes as DataFrames
    a = ck.analyze("kineto_traces/")          # HTA's analyses under HTA's names
    a.get_temporal_breakdown()
    sim = ck.simulate("run/rank", preset="h100-ib-2x8")
    sim.npus

Every function is documented in core/docs/python.md; the trace-writing ones take the options of
the chakra command of the same name as keyword arguments. Errors are ChakraError with the
command's message; an interrupt (Ctrl-C, or the notebook's stop button) stops a running call.
"""

from . import _core
from ._commands import ChakraError, Output, UsageError, run
from .analysis import Analysis, analyze, diff
from .simulation import Simulation, simulate, sweep
from .tools import anonymize, convert, import_stablehlo, link, predict, project, synth
from .trace import Ranks, Trace, read
from .viewer import Viewer, view

__version__ = _core.version

__all__ = [
    "Analysis",
    "ChakraError",
    "Output",
    "Ranks",
    "Simulation",
    "Trace",
    "UsageError",
    "Viewer",
    "analyze",
    "anonymize",
    "convert",
    "diff",
    "import_stablehlo",
    "link",
    "predict",
    "project",
    "read",
    "run",
    "simulate",
    "sweep",
    "synth",
    "view",
]
