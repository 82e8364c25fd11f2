"""Running chakra commands from Python: keyword arguments to options, errors to exceptions,
progress to the notebook (core/docs/python.md, "How calls run")."""

import json
import os
import sys
import time

from . import _core

ChakraError = _core.ChakraError


class UsageError(ChakraError, TypeError):
    """A call the command refused as written (an unknown keyword, a bad value): the CLI's usage
    error, with its message."""


def _program():
    """The chakra binary installed with this module: in the wheel (chakrakit/bin), in an installed
    tree (PREFIX/bin) or in a build tree (build/native/native)."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.path.join(here, "bin", "chakra"),
        os.path.join(here, "..", "..", "..", "..", "bin", "chakra"),
        os.path.join(here, "..", "..", "chakra"),
    ]
    for path in candidates:
        if os.path.isfile(path):
            return os.path.realpath(path)
    return None


_program_path = _program()


def program():
    """The chakra binary the functions run, or ChakraError saying where it was looked for."""
    if _program_path is None:
        raise ChakraError("chakrakit: no chakra binary beside the module (chakrakit/bin, PREFIX/bin, or the build "
                          f"tree's native/ folder, from {os.path.dirname(os.path.abspath(__file__))})")
    return _program_path


def _text(value):
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def option_args(options):
    """Keyword arguments as the command line spells them: what_if=... -> --what-if ...; True is a
    flag, False and None leave the option out, a list or tuple repeats it."""
    args = []
    for key, value in options.items():
        name = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(name)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [name, _text(v)]
        else:
            args += [name, _text(value)]
    return args


class Progress:
    """Shows a command's progress reports on one line of stderr, rewritten in place (a notebook
    cell shows the last state): after half a second, as the CLI does, and only where stderr is a
    terminal or a notebook's (or CHAKRA_PROGRESS=1)."""

    def __init__(self, command):
        self.command = command
        self.shown = False
        self.visible = _progress_visible()
        self.start = time.monotonic()

    def __call__(self, stage, done, total):
        if not self.visible or time.monotonic() - self.start < 0.5:
            return
        share = f"{100 * done / total:3.0f}%" if total else str(done)
        sys.stderr.write(f"\rchakra {self.command}: {stage} {share}  (interrupt to stop)\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def close(self):
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _progress_visible():
    if os.environ.get("CHAKRA_PROGRESS") == "1":
        return True
    try:
        return sys.stderr.isatty() or "ipykernel" in sys.modules
    except (AttributeError, ValueError):
        return False


class Output:
    """What a command printed: `text` (its standard output) and `notes` (its standard error:
    warnings and notes the CLI prints, kept rather than lost)."""

    def __init__(self, text, notes):
        self.text = text
        self.notes = notes

    def json(self):
        return json.loads(self.text)

    def __repr__(self):
        return self.text

    def _repr_pretty_(self, printer, cycle):
        printer.text(self.text)


def run(command, *args, **options):
    """Runs `chakra COMMAND ARGS... --OPTIONS` (the binary installed with the module, in a child
    process) and returns its Output; ChakraError (UsageError for a refused call line) carrying the
    CLI's message when it fails. Ctrl-C (KeyboardInterrupt) stops it as Ctrl-C stops the CLI."""
    argv = [command] + [_text(a) for a in args] + option_args(options)
    progress = Progress(command)
    try:
        code, out, err = _core.run(program(), argv, progress)
    finally:
        progress.close()
    err = err.decode("utf-8", errors="replace")
    if code > 128:
        raise ChakraError(f"chakra {command} died of signal {code - 128} ({err.strip() or 'nothing printed'})")
    if code != 0:
        message = err.strip() or f"chakra {command} failed (exit code {code})"
        raise (UsageError if code == 2 else ChakraError)(message)
    return Output(out.decode("utf-8", errors="replace"), err)


def run_json(command, *args, **options):
    """run() of a command that prints JSON, parsed."""
    return run(command, *args, **options).json()

