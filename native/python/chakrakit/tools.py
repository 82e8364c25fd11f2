"""The chakra commands that write traces, as functions: their options are keyword arguments
(what_if="x=2" is --what-if x=2; True a flag), their outputs files, their results Output
objects (the text the CLI prints and its notes)."""

from ._commands import run, run_json


def link(folder=None, *, output, host=None, device=None, **options):
    """chakra link: a PyTorch host execution trace and its Kineto trace joined into a linked
    JSON (host=, device=, output=), or every rank pair of a run folder (OUTPUT.N.json)."""
    args = [folder] if folder is not None else []
    return run("link", *args, output=output, host=host, device=device, **options)


def convert(source, output, kind="pytorch", **options):
    """chakra convert KIND: PyTorch host ETs or linked JSON (kind="pytorch", a file or a folder
    of ranks) or an ASTRA-sim text workload (kind="text") to Chakra .et."""
    return run("convert", kind, source, output=output, **options)


def synth(output, **options):
    """chakra synth: per-rank .et traces of a transformer training or inference step
    (OUTPUT.N.et), e.g. synth("llama", preset="llama3-8b", dp=8)."""
    return run("synth", output=output, **options)


def project(source, to, output, **options):
    """chakra project: the traces of SOURCE (IN_PREFIX of IN_PREFIX.N.et) projected to `to`
    ranks (data parallelism by default; tp=True or pp=True re-shard synthesized traces)."""
    return run("project", source, to=to, output=output, **options)


def anonymize(*sources, output, **options):
    """chakra anonymize: copies of traces, folders of ranks or PyTorch run folders with names
    and strings replaced by keyed tokens (key=, key_file=, keep_names=, report=)."""
    return run("anonymize", *sources, output=output, **options)


def import_stablehlo(program, output, **options):
    """chakra import stablehlo: per-device .et traces (OUTPUT.N.et) of a StableHLO program."""
    return run("import", "stablehlo", program, output=output, **options)


def predict(program, **options):
    """chakra predict: the predicted step time of a StableHLO program on a device and network,
    as the dict chakra predict --json - prints."""
    return run_json("predict", program, json="-", **options)
