"""chakrakit.view: the web page on given traces, served by chakra view from this process."""

import os
import signal

from . import _core
from ._commands import ChakraError, option_args, program


class Viewer:
    """A running `chakra view`: `url` is the page with the traces preloaded (127.0.0.1 only);
    close() (or leaving a `with` block) stops the server. In a notebook the object shows as a
    link to the page."""

    def __init__(self, paths, browser, options):
        argv = ["view"] + [os.fspath(p) for p in paths] + option_args({"no_browser": not browser, **options})
        self._pid, out, err = _core.spawn(program(), argv)
        self._err = err
        with os.fdopen(out, "r", encoding="utf-8") as stream:
            line = stream.readline()  # "chakra view: URL (N files to preload; ...)", or nothing on failure
        if not line.startswith("chakra view: "):
            message = self._stop()
            raise ChakraError(message.strip() or "chakra view stopped before serving")
        self.url = line.split()[2]

    def _stop(self):
        if self._pid is None:
            return ""
        try:
            os.kill(self._pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        os.waitpid(self._pid, 0)
        self._pid = None
        with os.fdopen(self._err, "r", encoding="utf-8") as stream:
            return stream.read()

    def close(self):
        self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self._stop()
        except Exception:
            pass

    def __repr__(self):
        return f"<chakrakit.Viewer {self.url}>"

    def _repr_html_(self):
        return f'<a href="{self.url}" target="_blank">chakra view: open the page</a> ({self.url})'


def view(*paths, browser=False, **options):
    """Serves the web page with the traces under `paths` preloaded and returns a Viewer (its
    `url`, shown as a link in a notebook); browser=True also opens it in this machine's browser,
    simulate="PRESET" simulates the traces once open, port= chooses the port, web= the page."""
    return Viewer(paths, browser, options)
