#!/usr/bin/env python3
"""Writes the hostile-input corpus of this folder (run it from anywhere; it writes next to itself).

Every file is small and made here from scratch, so the corpus is reproducible and each case's
damage is described where it is made. ok/ holds the valid companions some cases are run with. cases.tsv says which command reads each file and the
error it must give; tests/cli/cli_test.cpp (Cli.HostileCorpus) runs them all.
"""
import gzip
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(relative, data):
    path = os.path.join(HERE, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


# ---- protobuf wire encoding (just what Chakra's .et records need) ----

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(number, v):
    return varint(number << 3) + varint(v)


def field_bytes(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_double(number, v):
    return varint(number << 3 | 1) + struct.pack("<d", v)


def record(message):
    return varint(len(message)) + message


def metadata(version="0.0.4"):
    return record(field_bytes(1, version))


def attr_int(name, v):
    return field_bytes(10, field_bytes(1, name) + field_varint(9, v))


def attr_string(name, v):
    return field_bytes(10, field_bytes(1, name) + field_bytes(29, v))


def attr_double(name, v):
    return field_bytes(10, field_bytes(1, name) + field_double(3, v))


COMP, COLL = 4, 7


def node(node_id, name, node_type=COMP, ctrl=(), data=(), duration=10, extra=b""):
    m = field_varint(1, node_id) + field_bytes(2, name) + field_varint(3, node_type)
    if ctrl:
        m += field_bytes(4, b"".join(varint(d) for d in ctrl))
    if data:
        m += field_bytes(5, b"".join(varint(d) for d in data))
    m += field_varint(7, duration) + extra
    return record(m)


def et_files():
    good = metadata() + node(0, "gemm") + node(1, "all_reduce", COLL, ctrl=[0],
                                                extra=attr_int("comm_type", 0) + attr_int("comm_size", 1 << 20))
    # The last record loses its final 5 bytes.
    write("et/truncated-record.et", good[:-5])
    # Record 1's length prefix says 2^62 bytes.
    write("et/huge-length.et", metadata() + varint(1 << 62) + b"\x08\x01")
    # One byte of record 1 flipped: its first field key becomes wire type 7, which protobuf does not have.
    flipped = bytearray(good)
    flipped[len(metadata()) + 1] = 0x0F
    write("et/bit-flipped-wire-type.et", bytes(flipped))
    write("et/text-not-protobuf.et", "this is a text file, not a Chakra trace\n")
    write("et/duplicate-ids.et", metadata() + node(0, "a") + node(0, "b"))
    write("et/dependency-cycle.et", metadata() + node(0, "a", data=[2]) + node(1, "b", data=[0]) + node(2, "c", data=[1]))
    write("et/missing-dependency.et", metadata() + node(0, "a") + node(1, "b", data=[7]))
    # comm_size as a string: ASTRA-sim's feeder would read it as 0.
    write("et/wrong-attr-type.et", metadata() + node(0, "ar", COLL, extra=attr_int("comm_type", 0) + attr_string("comm_size", "1MB")))
    # comm_size NaN and negative, and a comm_type out of the enum's range.
    write("et/nan-comm-size.et", metadata() + node(0, "ar", COLL, extra=attr_int("comm_type", 0) + attr_double("comm_size", float("nan"))))
    write("et/negative-comm-size.et", metadata() + node(0, "ar", COLL, extra=attr_int("comm_type", 0) + attr_int("comm_size", (1 << 64) - 4096)))
    write("et/gzip-truncated.et.gz", gzip.compress(good, mtime=0)[:-12])
    # 64 MiB of zero bytes: deflate compresses them 1000:1.
    write("et/gzip-bomb.et.gz", gzip.compress(metadata() + bytes(64 << 20), compresslevel=9, mtime=0))


def json_files():
    write("json/deep-nesting.json", '{"nodes": ' + "[" * 10000 + "]" * 10000 + "}")
    write("json/truncated.json", '{"globalMetadata": {"version": "0.0.4"}, "nodes": [{"id": 0, "name": "a", "type": "COMP_NO')
    write("json/id-overflow.json", '{"nodes": [{"id": 123456789012345678901234567890, "name": "a", "type": "COMP_NODE"}]}')
    write("json/negative-duration.json", '{"nodes": [{"id": 0, "name": "a", "type": "COMP_NODE", "durationMicros": -5}]}')
    write("json/wrong-type.json", '{"nodes": [{"id": "zero", "name": "a", "type": "COMP_NODE"}]}')
    write("json/unknown-node-type.json", '{"nodes": [{"id": 0, "name": "a", "type": "QUANTUM_NODE"}]}')


def host_node(node_id, parent, name="aten::mm", extra=""):
    return ('{"id": %s, "name": "%s", "ctrl_deps": %s, "inputs": {"values": [], "shapes": [], "types": []}, '
            '"outputs": {"values": [], "shapes": [], "types": []}, "attrs": []%s}' % (node_id, name, parent, extra))


def host_et(nodes):
    return '{"schema": "1.0.2-chakra.0.0.4", "pid": 1, "time": "2024-01-01 00:00:00", "start_ts": 0, "nodes": [' + \
        ", ".join(nodes) + "]}"


def host_files():
    thread = "[pytorch|profiler|execution_trace|thread]"
    write("host/duplicate-ids.json", host_et([host_node(1, 1, thread), host_node(2, 1), host_node(2, 1)]))
    write("host/id-not-a-number.json", host_et([host_node('"one"', 1, thread)]))
    write("host/id-overflow.json", host_et([host_node("99999999999999999999", 1, thread)]))
    write("host/nodes-not-a-list.json", '{"schema": "1.0.2-chakra.0.0.4", "nodes": {"id": 1}}')
    write("host/kineto-not-host.json", '{"schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "k", "ts": 0, "dur": 1}]}')
    write("host/truncated.json", host_et([host_node(1, 1, thread), host_node(2, 1)])[:-40])
    # A node that is its own parent's parent: 2 -> 3 -> 2, under the thread root 1.
    write("host/parent-cycle.json", host_et([host_node(1, 1, thread), host_node(2, 3), host_node(3, 2)]))


def kineto_files():
    host = host_et([host_node(1, 1, "[pytorch|profiler|execution_trace|thread]"),
                    host_node(2, 1, "aten::mm", ', "rf_id": 5')])
    write("ok/host.json", host)  # the host trace the Kineto cases are linked with

    def kineto(events):
        return '{"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": [' + ", ".join(events) + "]}"
    op = '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %s, "dur": %s, "args": {"Record function id": 5}}'
    write("kineto/truncated.json", kineto([op % (0, 10)])[:-20])
    write("kineto/nan-timestamp.json", kineto([op % ("NaN", 10)]))
    write("kineto/negative-duration.json", kineto([op % (0, -10)]))
    write("kineto/timestamp-not-a-number.json", kineto([op % ('"soon"', 10)]))
    write("kineto/events-not-a-list.json", '{"schemaVersion": 1, "traceEvents": {"ph": "X"}}')
    write("kineto/deep-nesting.json", '{"traceEvents": [{"args": ' + "[" * 5000 + "]" * 5000 + "}]}")


def text_files():
    header = "DATA\n"
    write("text/unknown-type.txt", "QUANTUM\n1\nl 1 1 1 NONE 0 1 NONE 0 1 NONE 0 1\n")
    write("text/huge-layer-count.txt", header + "99999999999999999999\n")
    write("text/negative-layer-count.txt", header + "-3\n")
    write("text/missing-layers.txt", header + "3\n"
          "conv1 -1 5 ALLREDUCE 1024 5 NONE 0 5 NONE 0 10\n")
    write("text/negative-compute-time.txt", header + "1\n"
          "conv1 -1 -5 ALLREDUCE 1024 5 NONE 0 5 NONE 0 10\n")
    write("text/bad-comm-size.txt", header + "1\n"
          "conv1 -1 5 ALLREDUCE 1e999 5 NONE 0 5 NONE 0 10\n")
    write("text/unknown-collective.txt", header + "1\n"
          "conv1 -1 5 TELEPORT 1024 5 NONE 0 5 NONE 0 10\n")
    write("text/binary-garbage.txt", bytes(range(256)) * 4)


def config_files():
    write("net/negative-bandwidth.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ -50 ]\nlatency: [ 500 ]\n")
    write("net/nan-latency.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ .nan ]\n")
    write("net/overflowing-bandwidth.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 1e999 ]\nlatency: [ 500 ]\n")
    write("net/topology-not-a-list.yml", "topology: 5\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    write("net/unknown-topology.yml", "topology: [ Hypercube ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    write("net/mismatched-dimensions.yml", "topology: [ Ring, Switch ]\nnpus_count: [ 2 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500, 500 ]\n")
    write("net/zero-npus.yml", "topology: [ Ring ]\nnpus_count: [ 0 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    write("net/npu-count-overflow.yml", "topology: [ Ring, Ring, Ring ]\nnpus_count: [ 4294967296, 4294967296, 2 ]\n"
          "bandwidth: [ 50, 50, 50 ]\nlatency: [ 500, 500, 500 ]\n")
    # 8 NPUs for a 2-rank workload.
    write("net/more-npus-than-ranks.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    write("net/deep-nesting.yml", "topology: " + "[" * 5000 + "]" * 5000 + "\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    write("net/truncated.yml", "topology: [ Ring ]\nnpus_count: [ 2")
    write("net/binary-garbage.yml", bytes(range(256)) * 4)

    system = ('{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1, '
              '"preferred-dataset-splits": 4, "all-reduce-implementation": [%s], "all-gather-implementation": ["ring"], '
              '"reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"], '
              '"collective-optimization": "localBWAware", "local-mem-bw": 1600%s}')
    write("ok/system.json", system % ('"ring"', ""))  # for the network and comm-group cases
    write("ok/ring2.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n")  # for the system cases
    write("sys/unknown-algorithm.json", system % ('"teleport"', ""))
    write("sys/wrong-type.json", system % ('"ring"', ', "peak-perf": "fast"'))
    write("sys/negative-value.json", system.replace('"endpoint-delay": 10', '"endpoint-delay": -10') % ('"ring"', ""))
    # Within the configuration's range, but the reference keeps the delay in an int.
    write("sys/endpoint-delay-overflow.json", system.replace('"endpoint-delay": 10', '"endpoint-delay": 100000000000') % ('"ring"', ""))
    # Two all-reduce algorithms for the 1-D network the cases run on.
    write("sys/more-algorithms-than-dimensions.json", system % ('"ring", "direct"', ""))
    write("sys/truncated.json", (system % ('"ring"', ""))[:60])
    write("sys/not-an-object.json", "[1, 2, 3]\n")

    # The 2-NPU workload the configuration cases are simulated with: one 1 MiB all-reduce each.
    for npu in range(2):
        write("ok/allreduce.%d.et" % npu, metadata() + node(0, "all_reduce", COLL, extra=attr_int("comm_type", 0) + attr_int("comm_size", 1 << 20)))

    write("groups/rank-out-of-range.json", '{"1": [0, 99]}\n')
    write("groups/not-a-list.json", '{"1": 5}\n')
    write("groups/negative-rank.json", '{"1": [0, -1]}\n')
    write("groups/truncated.json", '{"1": [0, 1')


def sim_files():
    """Per-NPU workloads (PREFIX.{0,1}.et) that the simulator must refuse or report on."""
    ar = attr_int("comm_type", 0) + attr_int("comm_size", 1 << 20)
    # 2^62 us: past a 64-bit nanosecond clock, where a wrapped time would read as 0.
    for npu in range(2):
        write("sim/duration-overflow.%d.et" % npu, metadata() + node(0, "gemm", duration=1 << 62) + node(1, "ar", COLL, data=[0], extra=ar))
    # NPU 0 waits for a message NPU 1 never sends.
    recv = attr_int("comm_src", 1) + attr_int("comm_dst", 0) + attr_int("comm_tag", 7) + attr_int("comm_size", 4096)
    write("sim/never-sent.0.et", metadata() + node(0, "recv", 6, extra=recv))
    write("sim/never-sent.1.et", metadata() + node(0, "gemm"))
    # 2^62 bytes on ok/slow-ring2.yml's 1 kB/s link.
    for npu in range(2):
        write("sim/size-overflow.%d.et" % npu, metadata() + node(0, "ar", COLL, extra=attr_int("comm_type", 0) + attr_int("comm_size", 1 << 62)))
    write("ok/slow-ring2.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 0.000001 ]\nlatency: [ 500 ]\n")


def mlir_files():
    func = ("module @m {\n  func.func public @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
            "    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>\n    return %0 : tensor<8x8xf32>\n  }\n}\n")
    write("mlir/truncated.mlir", func[:70])
    write("mlir/bytecode.mlirbc", b"ML\xefR\x00\x05garbage")
    write("mlir/deep-nesting.mlir", "module @m {\n" + "(" * 20000 + "\n}\n")
    write("mlir/huge-dimension.mlir", func.replace("tensor<8x8xf32>", "tensor<99999999999999999999x8xf32>"))
    write("mlir/dimension-product-overflow.mlir", func.replace("tensor<8x8xf32>", "tensor<4294967296x4294967296x16xf32>"))
    # A terminal escape sequence (ESC [31m) where a token should be: the message must not replay it.
    write("mlir/escape-sequence.mlir", "module @m {\n  \x1b[31m\n}\n")
    write("mlir/binary-garbage.mlir", bytes(range(256)) * 4)


def log_files():
    write("log/binary-garbage.log", bytes(range(256)) * 4)
    write("log/overflowing-tick.log", "issue,sys->id=0, tick=999999999999999999999999, node->id=1, node->name=a, node->type=COMP_NODE\n")


if __name__ == "__main__":
    et_files()
    json_files()
    host_files()
    kineto_files()
    text_files()
    config_files()
    sim_files()
    mlir_files()
    log_files()
