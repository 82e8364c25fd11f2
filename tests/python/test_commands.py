"""The chakra commands as Python functions: each writes what the CLI writes for the same options
(byte for byte), simulate and sweep give the CLI's figures as DataFrames, errors and interrupts
come back as Python exceptions, view serves the page."""

import filecmp
import json
import os
import signal
import threading
import urllib.request

import pytest

import chakrakit as ck
from chakrakit._commands import option_args
from conftest import repo

PAIR = repo("assets", "examples", "dlrm_rank0_pair")
HOST = os.path.join(PAIR, "dlrm_eg_0.json.gz")
KINETO = os.path.join(PAIR, "worker0_step_12.1694128201545.pt.trace.json.gz")
SMALL_LLAMA = dict(model="llama", layers=2, hidden=256, ffn=512, heads=4, seq=64, batch=8, dp=2, tp=2)


def same_files(a, b):
    names_a, names_b = sorted(os.listdir(a)), sorted(os.listdir(b))
    assert names_a == names_b
    for name in names_a:
        assert filecmp.cmp(os.path.join(a, name), os.path.join(b, name), shallow=False), name


def test_link_and_convert_write_the_clis_bytes(cli, tmp_path):
    ours, theirs = tmp_path / "py", tmp_path / "cli"
    ours.mkdir()
    theirs.mkdir()
    printed = ck.link(host=HOST, device=KINETO, output=ours / "linked.json", quiet=True)
    cli("link", "--host", HOST, "--device", KINETO, "--output", theirs / "linked.json", "--quiet")
    ck.convert(ours / "linked.json", ours / "trace.0.et")
    cli("convert", "pytorch", theirs / "linked.json", "--output", theirs / "trace.0.et")
    same_files(ours, theirs)
    assert isinstance(printed, ck.Output)
    assert len(ck.read(ours / "trace.0.et")) > 1000


def test_synth_project_and_anonymize_write_the_clis_bytes(cli, tmp_path):
    ours, theirs = tmp_path / "py", tmp_path / "cli"
    ours.mkdir()
    theirs.mkdir()
    ck.synth(ours / "llama", **SMALL_LLAMA)
    cli("synth", "--output", theirs / "llama", *option_args(SMALL_LLAMA))
    ck.project(ours / "llama", to=8, output=ours / "big")
    cli("project", theirs / "llama", "--to", 8, "--output", theirs / "big")
    ck.anonymize(ours / "llama.0.et", output=ours / "anon.et", key="k")
    cli("anonymize", theirs / "llama.0.et", "--output", theirs / "anon.et", "--key", "k")
    same_files(ours, theirs)
    assert len(ck.read(ours / "big.7.et")) == len(ck.read(ours / "llama.3.et"))


def test_stablehlo_import_and_predict_are_the_clis(cli, tmp_path):
    program = repo("tests", "data", "fixtures", "hespas__test_split_replica_groups.mlir")
    network = repo("assets", "stablehlo", "networks", "a100_4gpu.yml")
    ck.import_stablehlo(program, tmp_path / "py", device="a100")
    cli("import", "stablehlo", program, "--output", tmp_path / "cli", "--device", "a100")
    written = [n for n in os.listdir(tmp_path) if n.startswith("py.")]
    assert len(written) >= 4
    for name in written:
        assert filecmp.cmp(tmp_path / name, tmp_path / ("cli." + name[3:]), shallow=False), name
    prediction = ck.predict(program, device="a100", network=network)
    assert prediction == cli.json("predict", program, "--device", "a100", "--network", network, "--json", "-")


def test_simulate_gives_the_clis_figures(cli, tmp_path):
    (tmp_path / "run").mkdir()
    ck.synth(tmp_path / "run" / "llama", **SMALL_LLAMA)
    sim = ck.simulate(tmp_path / "run", preset="h100-ib-2x8", npus=4, what_if="mha=2")
    cli("simulate", "--workload", tmp_path / "run", "--preset", "h100-ib-2x8", "--npus", "4",
        "--what-if", "mha=2", "--json", tmp_path / "sim.json")
    expected = json.loads((tmp_path / "sim.json").read_text())
    assert sim.json == expected
    assert list(sim.npus["finish_ns"]) == [n["finish_ns"] for n in expected["npus"]]
    assert sim.makespan_ns == expected["makespan_ns"] == sim.npus["finish_ns"].max()
    assert set(sim.collectives["comm_type"]) == set(expected["collectives"])
    assert len(sim.network) == len(expected["network"]["dimensions"])
    assert sim.what_if["makespan_ns"] < sim.makespan_ns
    assert "finished" in sim.summary


def test_a_replay_has_its_measured_tables(cli, tmp_path):
    """The bundled 8-rank DLRM run linked, converted and replayed, as the README's first command."""
    ck.link(repo("assets", "examples", "dlrm_8rank"), output=tmp_path / "linked" / "run.json", sync_deps=True, quiet=True)
    ck.convert(tmp_path / "linked", tmp_path / "et" / "run")
    sim = ck.simulate(tmp_path / "et" / "run", preset="v100-dgx1-8")
    assert len(sim.npus) == 8
    assert (sim.npus["measured_step_ns"] > 0).all()
    assert len(sim.profiler_steps) >= 8
    assert len(sim.measured_collectives) > 0
    cli("simulate", "--workload", tmp_path / "et" / "run", "--preset", "v100-dgx1-8", "--json", tmp_path / "s.json")
    assert sim.json == json.loads((tmp_path / "s.json").read_text())


def test_sweep_returns_the_clis_table(cli, tmp_path):
    spec = repo("assets", "sweeps", "allreduce_64npus.yaml")
    table = ck.sweep(spec, no_timing=True)
    cli("sweep", spec, "--output", tmp_path / "r", "--no-timing", "--quiet")
    rows = [json.loads(l) for l in (tmp_path / "r.jsonl").read_text().splitlines() if l.strip()]
    assert len(table) == len(rows) > 1
    assert list(table["step_ns"]) == [r["step_ns"] for r in rows]


def test_a_refused_call_raises_with_the_clis_message(tmp_path):
    with pytest.raises(ck.UsageError, match="--colour"):
        ck.synth(tmp_path / "x", colour="blue")
    with pytest.raises(ck.ChakraError, match="no-such-preset"):
        ck.simulate(tmp_path / "x", preset="no-such-preset")
    assert not os.listdir(tmp_path)


def test_without_its_binary_the_module_says_where_it_looked(monkeypatch):
    from chakrakit import _commands

    monkeypatch.setattr(_commands, "_program_path", None)
    with pytest.raises(ck.ChakraError, match="no chakra binary beside the module"):
        ck.synth("x", preset="llama3-8b")


def test_an_interrupt_stops_a_command_and_leaves_no_output(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CHAKRA_PROGRESS", "1")  # progress shown as in a notebook
    timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # Big enough to run for many seconds: stopped after one.
            ck.synth(tmp_path / "big", preset="llama3-70b", dp=512, tp=8, pp=4, batch=4096)
    finally:
        timer.cancel()
    assert [n for n in os.listdir(tmp_path) if n.endswith(".et")] == []
    assert "\rchakra synth: writing traces" in capsys.readouterr().err


def test_view_serves_the_page_with_the_traces(tmp_path):
    web = tmp_path / "web"  # a stand-in for the built page: what is served is what is there
    web.mkdir()
    (web / "index.html").write_text("<html>the page</html>")
    with ck.view(HOST, KINETO, web=web) as viewer:
        assert viewer.url.startswith("http://127.0.0.1:") and viewer.url.endswith("/?preload")
        root = viewer.url.split("?")[0]
        assert urllib.request.urlopen(root).read() == b"<html>the page</html>"
        manifest = json.loads(urllib.request.urlopen(root + "preload/manifest.json").read())
        assert [os.path.basename(f) for f in manifest["files"]] == [os.path.basename(HOST), os.path.basename(KINETO)]
        with open(HOST, "rb") as f:
            assert urllib.request.urlopen(root + manifest["files"][0]).read() == f.read()
    with pytest.raises(OSError):
        urllib.request.urlopen(root, timeout=5)  # stopped
    with pytest.raises(ck.ChakraError, match="no web page"):
        ck.view(HOST, web=tmp_path / "nothing")
