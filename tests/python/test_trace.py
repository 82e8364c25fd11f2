"""chakrakit.read: the nodes, dependencies and attributes of a trace, checked against chakra info
--json and chakra jsonize (the CLI's view of the same files), and its refusals."""

import gzip
import json
import os
import shutil

import numpy as np
import pytest

import chakrakit as ck
from conftest import repo

PYTORCH_2RANK = repo("assets", "examples", "pytorch_2rank")
RESNET_0 = repo("assets", "examples", "resnet50_dp_64npus", "resnet50_DataParallel.0.et.gz")


def test_nodes_and_dependencies_equal_the_clis_figures(cli):
    trace = ck.read(RESNET_0)
    info = cli.json("info", "--json", RESNET_0)[0]["summary"]
    nodes = trace.nodes
    assert len(trace) == len(nodes) == info["nodes"]
    for type_name, figures in info["node_types"].items():
        of_type = nodes[nodes["type"] == type_name]
        assert len(of_type) == figures["nodes"], type_name
        assert of_type["duration_micros"].sum() == figures["duration_micros"], type_name
    deps = trace.dependencies
    assert (deps["kind"] == "data").sum() == nodes["data_deps"].sum() == info["data_deps"]
    assert (deps["kind"] == "ctrl").sum() == nodes["ctrl_deps"].sum() == info["ctrl_deps"]
    attrs = trace.attributes
    for a in info["attributes"]:
        rows = attrs[attrs["name"] == a["name"]]
        assert rows["node"].nunique() == a["nodes"] and set(rows["kind"]) == {a["kind"]}, a["name"]
    assert trace.attribute("comm_size").sum() == info["collectives"]["ALL_REDUCE"]["bytes"]
    assert trace.metadata == {}  # this trace has no GlobalMetadata record


def test_every_value_equals_the_jsonized_trace(cli, tmp_path):
    """Node by node, the columns hold what chakra jsonize writes for the same file."""
    path = os.path.join(PYTORCH_2RANK, "chakra_trace.0.et.gz")
    out = tmp_path / "trace.json"
    cli("jsonize", path, out)
    doc = json.loads(out.read_text())
    json_nodes = doc["nodes"]
    trace = ck.read(path)
    nodes = trace.nodes
    assert list(nodes["id"]) == [int(n["id"]) for n in json_nodes]
    assert list(nodes["name"].astype(str)) == [n.get("name", "") for n in json_nodes]
    assert list(nodes["duration_micros"]) == [int(n.get("durationMicros", 0)) for n in json_nodes]
    assert list(nodes["start_time_micros"]) == [int(n.get("startTimeMicros", 0)) for n in json_nodes]
    expected_deps = sorted(
        (int(n["id"]), int(d), kind)
        for n in json_nodes
        for kind, key in (("data", "dataDeps"), ("ctrl", "ctrlDeps"))
        for d in n.get(key, [])
    )
    deps = trace.dependencies
    assert sorted(zip(deps["node"], deps["depends_on"], deps["kind"].astype(str))) == expected_deps
    attrs = trace.attributes
    expected_attrs = [(int(n["id"]), a["name"]) for n in json_nodes for a in n.get("attr", [])]
    assert list(zip(attrs["node"], attrs["name"].astype(str))) == expected_attrs
    # Typed values: every integer attribute equals the JSON's, whatever protobuf field holds it.
    checked = 0
    for (node, name), row in zip(expected_attrs, attrs.itertuples()):
        value = next(a for a in next(n for n in json_nodes if int(n["id"]) == node)["attr"] if a["name"] == name)
        field = next(k for k in value if k.endswith("Val"))
        if field in ("int64Val", "int32Val", "uint64Val", "uint32Val", "sint64Val", "sint32Val"):
            assert row.int == int(value[field]), (node, name)
            checked += 1
        elif field == "stringVal":
            assert row.text == value[field], (node, name)
            checked += 1
        elif field == "boolVal":
            assert row.int == int(value[field]), (node, name)
            checked += 1
    assert checked > 100


def test_one_attribute_per_node(cli):
    trace = ck.read(os.path.join(PYTORCH_2RANK, "chakra_trace.0.et.gz"))
    comm_size = trace.attribute("comm_size")
    nodes = trace.nodes
    assert len(comm_size) == len(nodes)
    colls = nodes["type"] == "COMM_COLL_NODE"
    assert colls.any()
    assert comm_size[colls].notna().all()
    assert comm_size[nodes["type"] == "COMP_NODE"].isna().all()


def test_a_folder_reads_as_ranks():
    ranks = ck.read(PYTORCH_2RANK)
    assert sorted(ranks) == [0, 1]
    assert ranks[1].rank == 1
    both = ranks.nodes
    assert list(both.columns[:2]) == ["rank", "id"]
    assert len(both) == len(ranks[0]) + len(ranks[1])
    assert (both["rank"] == 1).sum() == len(ranks[1])


def test_bad_inputs_are_refused_with_the_file_named(tmp_path):
    missing = tmp_path / "missing.et"
    with pytest.raises(ck.ChakraError, match="missing.et"):
        ck.read(missing)
    config = tmp_path / "system.json"
    config.write_text('{"scheduling-policy": "LIFO"}')
    with pytest.raises(ck.ChakraError, match="system.json"):
        ck.read(config)
    # A trace cut short: the reader says where it stops, no partial trace comes back.
    with gzip.open(RESNET_0, "rb") as f:
        data = f.read()
    truncated = tmp_path / "cut.et"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ck.ChakraError, match="cut.et"):
        ck.read(truncated)
    with pytest.raises(ck.ChakraError, match="more than 10 nodes"):
        ck.read(RESNET_0, max_nodes=10)
    with pytest.raises(ValueError, match="metadata"):
        ck.read(RESNET_0, metadata="sometimes")


def test_columns_are_arrays_not_python_objects():
    nodes = ck.read(RESNET_0).nodes
    assert nodes["id"].dtype == np.uint64
    assert nodes["duration_micros"].dtype == np.uint64
    assert str(nodes["name"].dtype) == "category"
    assert str(nodes["type"].dtype) == "category"


def test_a_progress_callback_can_stop_a_read(tmp_path):
    big = tmp_path / "copies"
    big.mkdir()
    shutil.copy(RESNET_0, big / "r.0.et.gz")
    calls = []

    def stop(stage, done, total):
        calls.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ck.read(big / "r.0.et.gz", progress=stop)
    assert calls
