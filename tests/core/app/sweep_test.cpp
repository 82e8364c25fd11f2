// Sweeps: the YAML subset, expansion (product order, zip, constraints, seeded samples), shards,
// points run against the simulator directly, tables, merges.
#include <gtest/gtest.h>

#include <set>

#include "chakra/analysis/sim_report.h"
#include "chakra/app/sim_presets.h"
#include "chakra/app/sweep.h"
#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/yaml.h"
#include "chakra/sim/simulate.h"
#include "chakra/stablehlo/stablehlo.h"
#include "chakra/synth/synth.h"
#include "chakra/support/error.h"
#include "test_support.h"

using namespace chakra;
using testing_support::error_of;
using namespace chakra::sweep;

namespace {

const char* kSpec = R"(# two axes and a zip group
name: test
workload:
  collective: {type: all_reduce, size: 1MiB, npus: 8}
network:
  topology: [Ring]
  npus: [8]
  bandwidth: [50]
  latency: [500]
system:
  preset: astra-sim-ring-8
axes:
  workload.collective.size: [1MiB, 4MiB, 16MiB]
  network.bandwidth: [25, 50]
zip:
  - system.preferred-dataset-splits: [1, 4]
    system.active-chunks-per-dimension: [1, 2]
)";

}  // namespace

// A key that is no string (a flow list) holding bytes that are not UTF-8: a clear error or a
// value, never nlohmann's exception escaping (found by fuzz_sim_job).
TEST(Yaml, AKeyOfInvalidUtf8InAListIsNoCrash) {
  for (const std::string& text : {std::string("[\xA3]: 1\n"), std::string("{[\xA3]: 1}\n")}) {
    bool clean = true;
    try {
      parse_yaml(text, "bad.yaml");
    } catch (const Error&) {  // a clear error naming the file is fine
    } catch (...) {
      clean = false;
    }
    EXPECT_TRUE(clean) << "an exception other than chakra::Error escaped";
  }
}

TEST(Yaml, ReadsTheSubsetAndNamesLinesOfWhatItCannot) {
  const auto v = parse_yaml(R"(
a: 1          # a comment
b: "x # not a comment"
c: [1, 2.5, three, 'four', {k: v}]
d:
  - 1
  - name: n
    value: [true, false, null, ~]
e:
- x
f: {g: [1, [2, 3]], h: "q\"uote"}
)",
                            "t.yaml");
  EXPECT_EQ(v["a"], 1);
  EXPECT_EQ(v["b"], "x # not a comment");
  EXPECT_EQ(v["c"].dump(), R"([1,2.5,"three","four",{"k":"v"}])");
  EXPECT_EQ(v["d"][1]["name"], "n");
  EXPECT_EQ(v["d"][1]["value"].dump(), "[true,false,null,null]");
  EXPECT_EQ(v["e"].dump(), R"(["x"])");
  EXPECT_EQ(v["f"]["h"], "q\"uote");
  EXPECT_EQ(v.begin().key(), "a");  // keys in the order written
  EXPECT_EQ(error_of([] { parse_yaml("a: 1\na: 2\n", "t.yaml"); }), "t.yaml: line 2: key 'a' given twice");
  // Nesting is capped, so a hostile line cannot exhaust the stack.
  EXPECT_EQ(error_of([] { parse_yaml("a: " + std::string(100000, '[') + "\n", "deep.yaml"); }),
            "deep.yaml: line 1: flow collections nested deeper than 256 levels");
  std::string stairs;
  for (int i = 0; i < 300; ++i) stairs += std::string(i, ' ') + "k:\n";
  EXPECT_EQ(error_of([&] {
              parse_yaml(stairs, "stairs.yaml");
            }).find("stairs.yaml: line 257: blocks nested deeper than 256 levels"),
            0u);
  EXPECT_TRUE(parse_yaml("a: " + std::string(200, '[') + std::string(200, ']') + "\n", "ok.yaml")["a"].is_array());
  EXPECT_EQ(error_of([] { parse_yaml("a: [1, 2\n", "t.yaml"); }),
            "t.yaml: line 1: ']' is missing (flow collections stay on one line)");
  EXPECT_EQ(error_of([] { parse_yaml("a:\n  b: 1\n    c: 2\n", "t.yaml"); }), "t.yaml: line 3: unexpected indentation");
  EXPECT_EQ(error_of([] { parse_yaml("a: &x 1\nb: *x\n", "t.yaml"); }).find("t.yaml: line"), 0u);
  EXPECT_EQ(error_of([] { parse_yaml("a: |\n  text\n", "t.yaml"); }).find("t.yaml: line"), 0u);
  EXPECT_EQ(error_of([] { parse_yaml("a: 'open\n", "t.yaml"); }),
            "t.yaml: line 1: a quoted string is not closed on its line");
}

// The product in spec order, the last axis fastest, a zip group moving as one axis.
TEST(Sweep, ExpandsTheProductInOrder) {
  const Spec spec = parse_spec(kSpec, "s.yaml", "");
  const Expansion e = expand(spec);
  EXPECT_EQ(e.product, 3u * 2u * 2u);
  ASSERT_EQ(e.points.size(), 12u);
  EXPECT_EQ(e.points[0].values.size(), 4u);
  EXPECT_EQ(e.points[1].values[2].second, 4);  // the zip group changes first
  EXPECT_EQ(e.points[1].values[3].second, 2);
  EXPECT_EQ(e.points[2].values[1].second, 50);  // then the bandwidth
  EXPECT_EQ(e.points[4].values[0].second, "4MiB");
  for (uint64_t i = 0; i < e.points.size(); ++i) EXPECT_EQ(e.points[i].index, i);
  const Json config = point_config(spec, e.points[3]);
  EXPECT_EQ(config["network"]["bandwidth"], 50);
  EXPECT_EQ(config["system"]["active-chunks-per-dimension"], 2);
  EXPECT_EQ(config["network"]["latency"].dump(), "[500]");  // the base, untouched
}

TEST(Sweep, ConstraintsDropPointsAndSamplesAreSeeded) {
  const std::string base = R"(workload: {collective: {type: all_reduce, npus: 8}}
network: {preset: astra-sim-ring-8}
axes:
  workload.synthetic.dp: [1, 2, 4, 8, 16]
  workload.synthetic.tp: [1, 2, 4, 8]
)";
  Spec spec = parse_spec(base + "constraints: [\"dp * tp == 8\"]\n", "s.yaml", "");
  Expansion e = expand(spec);
  EXPECT_EQ(e.product, 20u);
  EXPECT_EQ(e.dropped, 16u);
  ASSERT_EQ(e.points.size(), 4u);
  for (const Point& p : e.points) EXPECT_EQ(p.values[0].second.get<int>() * p.values[1].second.get<int>(), 8);
  spec = parse_spec(base + "constraints:\n  - dp >= tp and not (dp == 16)\n", "s.yaml", "");
  EXPECT_EQ(expand(spec).points.size(), 10u);  // dp 1..8 with tp <= dp: 1 + 2 + 3 + 4
  // A sample: distinct points of the product, the same for one seed, in product order.
  auto sample = [&](int count, int seed) {
    std::vector<std::string> out;
    for (const Point& p : expand(parse_spec(base + "sample: {count: " + std::to_string(count) +
                                                ", seed: " + std::to_string(seed) + "}\n",
                                            "s.yaml", ""))
                              .points)
      out.push_back(p.values[0].second.dump() + "x" + p.values[1].second.dump());
    return out;
  };
  const auto a = sample(7, 1), b = sample(7, 1), c = sample(7, 2);
  EXPECT_EQ(a.size(), 7u);
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), 7u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(sample(50, 1).size(), 20u);  // more than there are: all of them
  // Mistakes in a spec are named.
  EXPECT_EQ(error_of([&] { parse_spec(base + "constraints: [\"dp * \"]\n", "s.yaml", ""); }),
            "s.yaml: constraint 'dp * ': an operand is missing");
  EXPECT_EQ(error_of([&] { expand(parse_spec(base + "constraints: [\"ep == 1\"]\n", "s.yaml", "")); }),
            "s.yaml: constraint 'ep == 1': no axis or field named 'ep'");
  EXPECT_EQ(
      error_of([] { parse_spec("workload: {}\nnetwork: {}\naxes: {foo.bar: [1]}\n", "s.yaml", ""); }),
      "s.yaml: axis 'foo.bar': fields start with workload., network., system., backend, queues_per_dim or slowdown");
  EXPECT_EQ(error_of([] {
              parse_spec("workload: {}\nnetwork: {}\nzip: [{network.npus: [1, 2], network.latency: [1]}]\n", "s.yaml",
                         "");
            }),
            "s.yaml: zip: 'network.latency' has 1 values, 'network.npus' 2");
  EXPECT_EQ(error_of([] {
              parse_spec("workload: {}\nnetwork: {}\nextra: 1\n", "s.yaml", "");
            }).find("s.yaml: unknown key 'extra'"),
            0u);
  EXPECT_EQ(error_of([] {
              expand(parse_spec("workload: {}\nnetwork: {}\naxes: {network.npus: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}\n",
                                "s.yaml", ""),
                     5);
            }),
            "s.yaml: the axes make more than 5 points");
}

// Shard i of K takes the points i, i + K, ...: over the K shards every point exactly once.
TEST(Sweep, ShardsCoverEveryPointOnce) {
  for (uint32_t k = 1; k <= 17; ++k) {
    std::vector<int> seen(100, 0);
    for (uint32_t i = 0; i < k; ++i) {
      auto s = parse_shard(std::to_string(i) + "/" + std::to_string(k));
      ASSERT_TRUE(s);
      for (uint64_t p = 0; p < seen.size(); ++p) seen[p] += s->has(p);
    }
    for (int n : seen) EXPECT_EQ(n, 1) << k;
  }
  for (const char* bad : {"3/3", "1", "a/2", "0/0", "-1/2", "1/", "/2"}) EXPECT_FALSE(parse_shard(bad)) << bad;
}

// A point's row is what the simulator gives for the same configuration; a point that cannot run
// records its error and the others run on.
TEST(Sweep, PointsGiveTheSimulatorsFiguresAndFailuresAreRows) {
  const Spec spec =
      parse_spec(std::string(kSpec) + "constraints: [\"size != '16MiB' or bandwidth == 50\"]\n", "s.yaml", "");
  const Expansion e = expand(spec);
  const Runner runner(spec, false);
  const Row row = runner.run(e.points[0]);  // 1MiB, 25 GB/s, 1 split, 1 chunk
  EXPECT_EQ(row["error"], "");
  CollectiveOptions c;
  c.size = 1 << 20;
  c.npus = 8;
  std::vector<std::string> traces;
  for (uint32_t n = 0; n < 8; ++n) traces.push_back(encode_et(collective_trace(c, n)));
  sim::SimInputs in;
  in.workload = "direct";
  in.encoded_traces = &traces;
  in.network = astra::parse_network("topology: [Ring]\nnpus_count: [8]\nbandwidth: [25]\nlatency: [500]\n", "n");
  nlohmann::json sys = nlohmann::json::parse(astra::format_system(chakra::cluster_preset("astra-sim-ring-8").system));
  sys["preferred-dataset-splits"] = 1;
  sys["active-chunks-per-dimension"] = 1;
  in.system = astra::parse_system(sys.dump(), "s");
  const sim::SimResult r = sim::simulate(in);
  EXPECT_EQ(row["step_ns"], r.end());
  EXPECT_EQ(row["all_reduce_count"], 8);
  EXPECT_EQ(row["all_reduce_bytes"], 8u << 20);
  // The network's load per dimension, as the simulation reports it.
  ASSERT_EQ(row["network_bytes"].size(), 1u);
  EXPECT_EQ(row["network_bytes"][0], r.dimensions[0].bytes);
  EXPECT_GT(row["network_utilisation"][0].get<double>(), 0.0);
  EXPECT_EQ(row["network_utilisation"][0].get<double>(), chakra::dimension_utilisation(r, 0));
  EXPECT_FALSE(row.contains("sim_ms"));
  EXPECT_EQ(row.size(), table_columns(spec, false).size());
  // In two steps, as the web page runs points in its workers: the same row.
  Row two;
  const std::optional<chakra::SimJob> job = runner.job(e.points[0], two);
  ASSERT_TRUE(job);
  runner.finish(two, chakra::run_job(*job), 0);
  EXPECT_EQ(two, row);
  // A bad value: its row has the error and no figures.
  Point bad = e.points[0];
  bad.values[1].second = -5;
  const Row failed = runner.run(bad);
  EXPECT_NE(failed["error"].get<std::string>().find("bandwidth"), std::string::npos) << failed.dump();
  EXPECT_TRUE(failed["step_ns"].is_null());
  EXPECT_EQ(failed.size(), row.size());
  Row not_run;
  EXPECT_FALSE(runner.job(bad, not_run));
  EXPECT_EQ(not_run, failed);
}

// The other workload kinds: a synthesized model's rows carry its memory estimate; a StableHLO
// program's devices are simulated as chakra import stablehlo writes them.
TEST(Sweep, SynthAndStableHloWorkloads) {
  const Spec synth_spec = parse_spec(
      "workload:\n  synth: {preset: llama2-7b, layers: 2, batch: 8, seq: 512, micro_batches: 2, dp: 2, tp: 2, pp: 2}\n"
      "network: {topology: [Ring], npus: [8], bandwidth: [50], latency: [500]}\nsystem: {preset: astra-sim-ring-8}\n"
      "axes:\n  workload.synth.schedule: [1f1b, gpipe]\n",
      "s.yaml", "");
  const Expansion se = expand(synth_spec);
  const Runner synth_runner(synth_spec, false);
  for (const Point& p : se.points) {
    const Row row = synth_runner.run(p);
    ASSERT_EQ(row["error"], "") << row.dump();
    synth::SynthOptions o;
    synth::apply_preset("llama2-7b", o);
    o.shape.layers = 2, o.shape.batch = 8, o.shape.seq = 512, o.shape.micro_batches = 2;
    o.par.dp = 2, o.par.tp = 2, o.par.pp = 2;
    o.schedule = p.values[0].second == "gpipe" ? synth::Schedule::GPipe : synth::Schedule::OneFOneB;
    EXPECT_EQ(row["peak_mem_bytes"], synth::peak_memory_bytes(*synth::synthesize(o)));
  }
  EXPECT_GT(synth_runner.run(se.points[1])["peak_mem_bytes"].get<uint64_t>(),
            synth_runner.run(se.points[0])["peak_mem_bytes"].get<uint64_t>());

  const std::string program = testing_support::shared("reference/stablehlo/llama3/llama3-100m.spmd.mlir");
  const Spec shlo_spec = parse_spec("workload:\n  stablehlo: {program: " + program +
                                        ", device: h100}\n"
                                        "network: {topology: [Ring], npus: [4], bandwidth: [50], latency: "
                                        "[500]}\nsystem: {preset: astra-sim-ring-8}\n"
                                        "axes:\n  workload.stablehlo.device: [h100, a100]\n",
                                    "s.yaml", "");
  const Runner shlo_runner(shlo_spec, false);
  const Expansion he = expand(shlo_spec);
  std::vector<uint64_t> compute;
  for (const Point& p : he.points) {
    const Row row = shlo_runner.run(p);
    ASSERT_EQ(row["error"], "") << row.dump();
    EXPECT_EQ(row["npus"], 4);
    EXPECT_TRUE(row["peak_mem_bytes"].is_null());
    // The same as simulating the imported traces directly.
    const stablehlo::Analysis a = stablehlo::analyze(stablehlo::load_program(program));
    std::vector<std::string> traces;
    for (uint32_t d = 0; d < 4; ++d) {
      Trace t;
      stablehlo::device_trace(a, stablehlo::device_preset(p.values[0].second.get<std::string>()), d, t);
      traces.push_back(encode_et(t));
    }
    sim::SimInputs in;
    in.workload = "direct";
    in.encoded_traces = &traces;
    for (const auto& [id, members] : stablehlo::comm_groups(a))
      in.groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
    in.network = astra::parse_network("topology: [Ring]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n", "n");
    Row again;
    chakra::SimJob job = *shlo_runner.job(p, again);
    in.system = job.system;
    EXPECT_EQ(row["step_ns"], sim::simulate(in).end());
    EXPECT_GT(row["all_reduce_count"].get<uint64_t>() + row["reduce_scatter_count"].get<uint64_t>() +
                  row["all_gather_count"].get<uint64_t>(),
              0u);
    compute.push_back(row["compute_ns"].get<uint64_t>());
  }
  EXPECT_LT(compute[0], compute[1]);  // an H100 computes faster than an A100
  // Slowdowns as an axis (chakra simulate --slowdown's spec): half the bandwidth, a slower step.
  const Spec slow_spec = parse_spec(std::string(kSpec).substr(0, std::string(kSpec).find("axes:")) +
                                        "axes:\n  slowdown: ['', 'dim=0:bandwidth=0.5', 'npu=9:compute=2']\n",
                                    "s.yaml", "");
  const Runner slow_runner(slow_spec, false);
  const Expansion le = expand(slow_spec);
  const Row normal = slow_runner.run(le.points[0]), slower = slow_runner.run(le.points[1]),
            bad_npu = slow_runner.run(le.points[2]);
  EXPECT_GT(slower["step_ns"].get<uint64_t>(), normal["step_ns"].get<uint64_t>() * 3 / 2) << slower.dump();
  EXPECT_NE(bad_npu["error"].get<std::string>().find("the slowdowns name NPU 9"), std::string::npos) << bad_npu.dump();
  const Spec bad_spec =
      parse_spec("workload:\n  stablehlo: {program: p.mlir, devise: h100}\nnetwork: {topology: [Ring], npus: [4]}\n",
                 "s.yaml", "");
  const Row bad = Runner(bad_spec, false).run(expand(bad_spec).points[0]);
  EXPECT_NE(bad["error"].get<std::string>().find("workload.stablehlo.devise: unknown field"), std::string::npos)
      << bad.dump();
}

// Tables: CSV and JSON lines sorted by point; rows read back (a cut last line counted, not an
// error); shards' rows merge into exactly the unsharded table; a duplicate or another spec's row
// is an error naming the file.
TEST(Sweep, ShardTablesMergeIntoTheUnshardedTable) {
  const Spec spec = parse_spec(kSpec, "s.yaml", "");
  const Expansion e = expand(spec);
  const Runner runner(spec, false);
  std::vector<Row> all;
  for (const Point& p : e.points) all.push_back(runner.run(p));
  const std::vector<std::string> columns = table_columns(spec, false);
  const std::string whole = table_jsonl(all), whole_csv = table_csv(columns, all);
  std::vector<std::pair<std::string, ReadRows>> parts;
  for (uint32_t i = 0; i < 5; ++i) {
    std::vector<Row> rows;
    for (const Point& p : e.points)
      if (Shard{i, 5}.has(p.index)) rows.push_back(runner.run(p));
    std::reverse(rows.begin(), rows.end());  // finished in any order
    std::string text;
    for (const Row& r : rows) text += row_jsonl(r);
    parts.emplace_back("part" + std::to_string(i), read_rows(text, "part" + std::to_string(i)));
  }
  const std::vector<Row> merged = merge_rows(parts);
  EXPECT_EQ(table_jsonl(merged), whole);
  EXPECT_EQ(table_csv(columns, merged), whole_csv);
  EXPECT_TRUE(missing_points(merged, e.points.size()).empty());
  EXPECT_EQ(missing_points({merged.begin() + 1, merged.end()}, e.points.size()), std::vector<uint64_t>{0});
  // A line cut short by a kill, at the end only.
  const std::string cut = whole.substr(0, whole.size() - 10);
  const ReadRows r = read_rows(cut, "cut");
  EXPECT_EQ(r.truncated, 1u);
  EXPECT_EQ(r.rows.size(), all.size() - 1);
  EXPECT_EQ(error_of([&] { read_rows("{\"x\":1}\n", "t.jsonl"); }),
            "t.jsonl: line 1: not a row of a sweep table (point and sweep are missing)");
  // Its rows came in reverse order: point 10 is its first.
  EXPECT_EQ(error_of([&] { merge_rows({parts[0], parts[0]}); }), "part0: point 10 is also in part0");
  Row other = all[1];
  other["sweep"] = "0000000000000000";
  EXPECT_NE(error_of([&] {
              merge_rows({parts[0], {"other", ReadRows{{other}, 0}}});
            }).find("other: rows of sweep 0000000000000000"),
            std::string::npos);
  // CSV: a header, then one line per point; lists and text with commas quoted.
  EXPECT_EQ(whole_csv.substr(0, whole_csv.find('\n')),
            "point,sweep,workload.collective.size,network.bandwidth,system.preferred-dataset-splits,"
            "system.active-chunks-per-dimension,npus,step_ns,compute_ns,exposed_communication_ns,non_compute_ns,peak_"
            "mem_bytes,"
            "messages,events,network_bytes,network_utilisation,"
            "all_reduce_count,all_reduce_bytes,all_reduce_time_ns,all_gather_count,all_gather_bytes,"
            "all_gather_time_ns,reduce_scatter_count,reduce_scatter_bytes,reduce_scatter_time_ns,"
            "all_to_all_count,all_to_all_bytes,all_to_all_time_ns,broadcast_count,broadcast_bytes,"
            "broadcast_time_ns,error");
  EXPECT_EQ(std::count(whole_csv.begin(), whole_csv.end(), '\n'), 13);
}

// The plotted means: per x value and split value, over the rows without an error, in point order.
TEST(Sweep, GridOfMeansForPlots) {
  const Spec spec = parse_spec(kSpec, "s.yaml", "");
  const Expansion e = expand(spec);
  const Runner runner(spec, false);
  std::vector<Row> rows;
  for (const Point& p : e.points) rows.push_back(runner.run(p));
  rows[0]["error"] = "failed";  // left out of the means
  EXPECT_EQ(axis_columns(rows[0]),
            (std::vector<std::string>{"workload.collective.size", "network.bandwidth",
                                      "system.preferred-dataset-splits", "system.active-chunks-per-dimension"}));
  const Grid g = grid_of(rows, "workload.collective.size", "network.bandwidth", "step_ns");
  EXPECT_EQ(g.x_values, (std::vector<std::string>{"1MiB", "4MiB", "16MiB"}));
  EXPECT_EQ(g.split_values, (std::vector<std::string>{"25", "50"}));
  // 1MiB at 25 GB/s: points 0 and 1, point 0 failed.
  EXPECT_EQ(g.at(0, 0), rows[1]["step_ns"].get<double>());
  EXPECT_EQ(g.at(1, 2), (rows[10]["step_ns"].get<double>() + rows[11]["step_ns"].get<double>()) / 2);
  const Grid one = grid_of(rows, "network.bandwidth", "", "step_ns");
  EXPECT_EQ(one.split_values.size(), 1u);
  EXPECT_GT(one.at(0, 0), one.at(0, 1));  // more bandwidth, shorter steps
}
