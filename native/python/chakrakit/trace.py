"""chakrakit.read: Chakra traces as pandas DataFrames, column by column from the core's store."""

import os

import numpy as np
import pandas as pd

from . import _core
from ._commands import ChakraError, Progress


def _categorical(codes, names):
    return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object))


class Trace:
    """One rank's Chakra trace, read by the core. `nodes`, `dependencies` and `attributes` are
    DataFrames built on first use from the core's columns (strings as categoricals); `metadata`
    is the GlobalMetadata record's attributes; `attribute(name)` is one attribute per node."""

    def __init__(self, native, rank=None):
        self._native = native
        self.rank = rank
        self._nodes = self._deps = self._attrs = None

    @property
    def path(self):
        return self._native.path

    def __len__(self):
        return len(self._native)

    def __repr__(self):
        rank = "" if self.rank is None else f" rank {self.rank}"
        return f"<chakrakit.Trace{rank}: {len(self)} nodes from {self.path}>"

    @property
    def nodes(self):
        """One row per node, in file order: id, name, type (COMP_NODE, ...), start_time_micros,
        duration_micros, and how many data and control dependencies it has."""
        if self._nodes is None:
            c = self._native.node_columns()
            types = np.asarray(c["type"])
            known = (types >= 0) & (types < len(c["type_names"]))
            type_codes = np.where(known, types, -1)
            self._nodes = pd.DataFrame(
                {
                    "id": c["id"],
                    "name": _categorical(c["name"], c["names"]),
                    "type": _categorical(type_codes, c["type_names"]),
                    "start_time_micros": c["start_time_micros"],
                    "duration_micros": c["duration_micros"],
                    "data_deps": c["data_deps"],
                    "ctrl_deps": c["ctrl_deps"],
                },
                copy=False,
            )
        return self._nodes

    @property
    def dependencies(self):
        """One row per dependency: `node` (id) depends on `depends_on` (id), kind data or ctrl."""
        if self._deps is None:
            c = self._native.dependency_columns()
            kind = np.asarray(c["kind"]).astype(np.int8) - 1
            self._deps = pd.DataFrame(
                {"node": c["node"], "depends_on": c["depends_on"], "kind": _categorical(kind, ["data", "ctrl"])},
                copy=False,
            )
        return self._deps

    @property
    def attributes(self):
        """One row per node attribute: node (id), name, kind (the protobuf field: int64_val, ...),
        and the value in the column of its kind: `int` (integers and bools; <NA> otherwise),
        `float` (floating kinds, and integers as floats), `text` (strings, bytes, and lists
        written out)."""
        if self._attrs is None:
            c = self._native.attribute_columns()
            self._attrs = pd.DataFrame(
                {
                    "node": c["node"],
                    "name": _categorical(c["name"], c["names"]),
                    "kind": _categorical(c["kind"], c["kind_names"]),
                    "int": pd.arrays.IntegerArray(np.asarray(c["int"]), ~np.asarray(c["has_int"])),
                    "float": c["float"],
                    "text": _categorical(c["text"], c["texts"]),
                },
                copy=False,
            )
        return self._attrs

    def attribute(self, name):
        """The attribute `name` of every node, aligned with `nodes` (missing: <NA>/NaN): its
        integer column when every value is an integer, else its float or text column."""
        a = self.attributes
        rows = a[a["name"] == name]
        rows = rows[~rows["node"].duplicated()]  # the first of a name, as the simulators read it
        if rows["int"].notna().all():
            column = rows["int"]
        elif rows["text"].notna().all():
            column = rows["text"].astype(object)
        else:
            column = rows["float"]
        series = pd.Series(column.values, index=rows["node"].values, name=name)
        return series.reindex(self.nodes["id"].values).reset_index(drop=True)

    @property
    def metadata(self):
        return self._native.metadata()


class Ranks(dict):
    """Traces of a run by rank (a folder of PREFIX.N.et files): a dict rank -> Trace whose
    `nodes`, `dependencies` and `attributes` are every rank's, with a `rank` column first."""

    def _joined(self, what):
        frames = [getattr(t, what).assign(rank=r) for r, t in sorted(self.items())]
        frame = pd.concat(frames, ignore_index=True)
        return frame[["rank"] + [c for c in frame.columns if c != "rank"]]

    @property
    def nodes(self):
        return self._joined("nodes")

    @property
    def dependencies(self):
        return self._joined("dependencies")

    @property
    def attributes(self):
        return self._joined("attributes")

    def __repr__(self):
        return f"<chakrakit.Ranks: {len(self)} ranks {sorted(self)}>"


def read(path, metadata="auto", max_nodes=0, progress=None):
    """A Chakra trace (.et or .et.gz) as a Trace, or a folder of per-rank traces (PREFIX.N.et)
    as Ranks. `metadata`: whether record 0 is a GlobalMetadata ('auto', 'present', 'absent');
    `max_nodes` refuses a larger trace (0: no limit); `progress(stage, done, total)` is called
    while reading (by default the progress shows in a notebook or on a terminal). ChakraError names
    the file and what is wrong with it."""
    path = os.fspath(path)
    files = _core.trace_files(path)
    shown = Progress("read") if progress is None else None
    try:
        if not os.path.isdir(path):
            return Trace(_core.read(path, metadata, max_nodes, progress or shown), files[0][1])
        ranks = Ranks()
        for file, rank in files:
            if rank is None:
                raise ChakraError(f"{file}: no rank in its name (PREFIX.N.et): read it on its own")
            if rank in ranks:
                raise ChakraError(f"{path}: rank {rank} twice: {ranks[rank].path} and {file}")
            ranks[rank] = Trace(_core.read(file, metadata, max_nodes, progress or shown), rank)
        return ranks
    finally:
        if shown:
            shown.close()
