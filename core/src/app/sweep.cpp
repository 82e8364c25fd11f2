#include "chakra/app/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <list>
#include <set>

#include "chakra/analysis/sim_report.h"
#include "chakra/app/sim_presets.h"
#include "chakra/astra/config.h"
#include "chakra/astra/generate.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/format/yaml.h"
#include "chakra/sim/simulate.h"
#include "chakra/stablehlo/stablehlo.h"
#include "chakra/support/error.h"
#include "chakra/support/stopwatch.h"
#include "chakra/support/text.h"
#include "chakra/synth/synth.h"
#include "chakra/trace/schema.h"
#include "app/sweep_parts.h"

namespace chakra::sweep {

namespace {

std::vector<std::string> split_path(const std::string& field) {
  std::vector<std::string> parts;
  for (std::string_view p : Split(field, '.')) parts.emplace_back(p);
  return parts;
}

const Json* find_path(const Json& root, const std::string& field) {
  const Json* at = &root;
  for (const std::string& p : split_path(field)) {
    if (!at->is_object() || !at->contains(p)) return nullptr;
    at = &(*at)[p];
  }
  return at;
}

std::optional<Value> value_of(const Json& v) {
  if (v.is_number()) return Value{false, v.get<double>(), {}};
  if (v.is_boolean()) return Value{false, v.get<bool>() ? 1.0 : 0.0, {}};
  if (v.is_string()) return Value{true, 0, v.get<std::string>()};
  return std::nullopt;
}

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<Json> values_of(const Json& v) {
  if (v.is_array()) return std::vector<Json>(v.begin(), v.end());
  return {v};
}

// ---- building a point's simulation ---------------------------------------------------------

uint64_t size_of(const Json& v, const std::string& what) {
  if (v.is_string()) {
    if (auto s = parse_size(v.get<std::string>())) return *s;
    throw Error(what + ": '" + v.get<std::string>() + "' is not a size (e.g. 1048576, 64KiB, 1MiB)");
  }
  return as_uint(v, what);
}

bool bool_of(const Json& v, const std::string& what) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  throw Error(what + ": " + describe(v) + " is not true or false");
}

}  // namespace

synth::SynthOptions synth_options(const Json& s) {
  synth::SynthOptions o;
  if (s.contains("preset")) synth::apply_preset(text_of(s["preset"], "workload.synth.preset"), o);
  for (const auto& item : s.items()) {
    const std::string& key = item.key();
    const Json& v = item.value();
    const std::string what = "workload.synth." + key;
    auto u = [&] { return as_uint(v, what); };
    synth::ModelShape& m = o.shape;
    synth::Parallelism& p = o.par;
    if (key == "preset")
      continue;
    else if (key == "model") {
      const std::string t = text_of(v, what);
      if (t == "gpt")
        o.model = synth::ModelKind::Gpt;
      else if (t == "llama")
        o.model = synth::ModelKind::Llama;
      else if (t == "moe")
        o.model = synth::ModelKind::Moe;
      else
        throw Error(what + ": '" + t + "' is not gpt, llama or moe");
    } else if (key == "layers")
      m.layers = u();
    else if (key == "hidden")
      m.hidden = u();
    else if (key == "ffn")
      m.ffn = u();
    else if (key == "heads")
      m.heads = u();
    else if (key == "kv_heads")
      m.kv_heads = u();
    else if (key == "vocab")
      m.vocab = u();
    else if (key == "seq")
      m.seq = u();
    else if (key == "batch")
      m.batch = u();
    else if (key == "micro_batches")
      m.micro_batches = u();
    else if (key == "experts")
      m.experts = u();
    else if (key == "top_k")
      m.top_k = u();
    else if (key == "dp")
      p.dp = u();
    else if (key == "tp")
      p.tp = u();
    else if (key == "pp")
      p.pp = u();
    else if (key == "sp")
      p.sp = u();
    else if (key == "ep")
      p.ep = u();
    else if (key == "fsdp")
      p.fsdp = bool_of(v, what);
    else if (key == "rank_order")
      p.rank_order = synth::parse_rank_order(text_of(v, what));
    else if (key == "sequence_parallel")
      p.sequence_parallel = bool_of(v, what);
    else if (key == "recompute")
      o.recompute = bool_of(v, what);
    else if (key == "dtype_bytes")
      o.dtype_bytes = static_cast<uint32_t>(std::min<uint64_t>(u(), 64));
    else if (key == "schedule") {
      const std::string t = text_of(v, what);
      if (t == "1f1b")
        o.schedule = synth::Schedule::OneFOneB;
      else if (t == "gpipe")
        o.schedule = synth::Schedule::GPipe;
      else if (t == "none")
        o.schedule = synth::Schedule::None;
      else
        throw Error(what + ": '" + t + "' is not 1f1b, gpipe or none");
    } else if (key == "step") {
      const std::string t = text_of(v, what);
      if (t == "train")
        o.step = synth::Step::Train;
      else if (t == "prefill")
        o.step = synth::Step::Prefill;
      else if (t == "decode")
        o.step = synth::Step::Decode;
      else
        throw Error(what + ": '" + t + "' is not train, prefill or decode");
    } else if (key == "attention") {
      const std::string t = text_of(v, what);
      if (t == "fused")
        o.attention = synth::Attention::Fused;
      else if (t == "full")
        o.attention = synth::Attention::Full;
      else
        throw Error(what + ": '" + t + "' is not fused or full");
    } else {
      throw Error(what +
                  ": unknown field (model, preset, layers, hidden, ffn, heads, kv_heads, vocab, seq, batch, "
                  "micro_batches, experts, top_k, dp, tp, pp, sp, ep, fsdp, sequence_parallel, rank_order, recompute, "
                  "dtype_bytes, schedule, attention, step)");
    }
  }
  return o;
}

// A workload, built once: its traces (encoded) or the prefix of its files, and its groups.
struct Runner::Built {
  std::vector<std::string> encoded;  // empty: `make` them, or read `prefix`.<npu>.et
  // NPU i's trace made when the simulator reads it (synthesized and projected workloads, whose
  // thousands of ranks would otherwise be held at once).
  std::function<std::string(uint32_t)> make;
  std::string prefix;
  astra::CommGroups groups;
  std::string groups_source;
  uint64_t npus = 0;                    // 0: as many as the network has
  std::optional<uint64_t> peak_memory;  // bytes on the fullest rank, where the workload says
};

namespace {

std::shared_ptr<const Runner::Built> build_workload(const Json& w, const std::string& base_dir) {
  if (!w.is_object() || w.size() != 1)
    throw Error("workload: give exactly one of traces, collective, synth, stablehlo, project");
  auto b = std::make_shared<Runner::Built>();
  const auto first = w.begin();
  const std::string kind = first.key();
  const Json& v = first.value();
  if (kind == "traces") {
    if (v.is_string()) {
      b->prefix = resolve(base_dir, v.get<std::string>());
    } else if (v.is_object() && v.contains("prefix")) {
      b->prefix = resolve(base_dir, text_of(v["prefix"], "workload.traces.prefix"));
      if (v.contains("comm_group")) {
        b->groups_source = resolve(base_dir, text_of(v["comm_group"], "workload.traces.comm_group"));
        b->groups = astra::load_comm_groups(b->groups_source);
      }
    } else {
      throw Error("workload.traces: a prefix (PREFIX.<npu>.et) or folder, or {prefix: ..., comm_group: FILE}");
    }
    // A folder of per-NPU traces, as chakra simulate takes it: its prefix and NPUs, and its
    // comm groups unless the spec names some.
    if (std::error_code ec; std::filesystem::is_directory(b->prefix, ec)) {
      const sim::WorkloadFolder f = sim::workload_folder(b->prefix);
      b->prefix = f.prefix;
      b->npus = f.npus;
      if (b->groups_source.empty() && !f.comm_group.empty()) {
        b->groups_source = f.comm_group;
        b->groups = astra::load_comm_groups(f.comm_group);
      }
    }
  } else if (kind == "collective") {
    if (!v.is_object()) throw Error("workload.collective: {type: all_reduce, size: 1MiB, npus: 64}");
    CollectiveOptions o;
    for (const auto& [key, x] : v.items()) {
      const std::string what = "workload.collective." + key;
      if (key == "type") {
        std::string t = text_of(x, what);
        for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        auto ct = parse_comm_type(t);
        if (!ct) throw Error(what + ": unknown collective '" + x.get<std::string>() + "'");
        o.type = static_cast<CommType>(*ct);
      } else if (key == "size") {
        o.size = size_of(x, what);
      } else if (key == "npus") {
        o.npus = static_cast<uint32_t>(std::clamp<uint64_t>(as_uint(x, what), 1, 1u << 20));
      } else if (key == "count") {
        o.count = static_cast<uint32_t>(std::clamp<uint64_t>(as_uint(x, what), 1, 1u << 20));
      } else {
        throw Error(what + ": unknown field (type, size, npus, count)");
      }
    }
    b->npus = o.npus;
    for (uint32_t n = 0; n < o.npus; ++n) b->encoded.push_back(encode_et(collective_trace(o, n)));
  } else if (kind == "synth") {
    if (!v.is_object()) throw Error("workload.synth: {preset: llama2-7b, dp: 8, tp: 8, ...}");
    const std::shared_ptr<const synth::Workload> sw = synth::synthesize(synth_options(v));
    b->npus = synth::num_ranks(*sw);
    if (b->npus > 65536)
      throw Error("workload.synth: " + std::to_string(b->npus) + " ranks (a sweep point takes at most 65536)");
    b->make = [sw](uint32_t r) {
      Trace t;
      synth::rank_trace(*sw, r, t);
      return encode_et(t);
    };
    for (const auto& [id, members] : synth::comm_groups(*sw))
      b->groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
    b->peak_memory = synth::peak_memory_bytes(*sw);
  } else if (kind == "stablehlo") {
    // A per-device (SPMD-partitioned) program, as chakra import stablehlo turns it into traces.
    if (v.is_string()) return build_workload(Json{{"stablehlo", Json{{"program", v}}}}, base_dir);
    if (!v.is_object() || !v.contains("program"))
      throw Error("workload.stablehlo: {program: FILE.mlir, device: h100, module: 0, trip_count: 1}");
    stablehlo::AnalyzeOptions ao;
    std::string device = "h100";
    uint64_t module = 0;
    for (const auto& [key, x] : v.items()) {
      const std::string what = "workload.stablehlo." + key;
      if (key == "program") continue;
      if (key == "device")
        device = text_of(x, what);
      else if (key == "module")
        module = as_uint(x, what);
      else if (key == "trip_count")
        ao.default_trip_count = std::max<uint64_t>(1, as_uint(x, what));
      else if (key == "fusion")
        ao.fuse_elementwise = x.is_boolean() ? x.get<bool>() : throw Error(what + ": true or false");
      else
        throw Error(what + ": unknown field (program, device, module, trip_count, fusion)");
    }
    const stablehlo::Program program =
        stablehlo::load_program(resolve(base_dir, text_of(v["program"], "workload.stablehlo.program")));
    if (module >= program.modules())
      throw Error("workload.stablehlo.module: " + std::to_string(module) + ", but " + program.file() + " has " +
                  std::to_string(program.modules()) + " module(s)");
    const stablehlo::Analysis analysis = stablehlo::analyze(program, module, ao);
    const stablehlo::DeviceSpec spec = stablehlo::device_preset(device);
    b->npus = analysis.devices;
    Trace t;
    for (uint32_t d = 0; d < analysis.devices; ++d) {
      t = Trace();
      stablehlo::device_trace(analysis, spec, d, t);
      b->encoded.push_back(encode_et(t));
    }
    for (const auto& [id, members] : stablehlo::comm_groups(analysis))
      b->groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
  } else if (kind == "project") {
    ProjectedRun run = projected_run(v, base_dir);
    b->npus = run.npus;
    b->make = std::move(run.make);
    b->groups = std::move(run.groups);
  } else {
    throw Error("workload: unknown kind '" + kind + "' (traces, collective, synth, stablehlo, project)");
  }
  return b;
}

// The network of a point: a preset (fitted to the workload's NPUs unless `npus` is given), a
// file, or given inline; then its fields set from the spec (a number for every dimension, or a
// list with one per dimension), read back through parse_network like any network file.
astra::NetworkConfig build_network(const Json& n, const std::string& base_dir, uint64_t workload_npus) {
  if (!n.is_object())
    throw Error(
        "network: {preset: NAME} or {file: NET.yml} or {topology: [...], npus: [...], bandwidth: [...], latency: "
        "[...]}");
  astra::NetworkConfig net;
  const bool sets_npus = n.contains("npus");
  if (n.contains("preset")) {
    net = chakra::cluster_preset(text_of(n["preset"], "network.preset")).network;
    if (workload_npus && !sets_npus) net = chakra::fit_network(net, workload_npus);
  } else if (n.contains("file")) {
    net = astra::load_network(resolve(base_dir, text_of(n["file"], "network.file")));
  }
  for (const auto& [key, v] : n.items())
    if (key != "preset" && key != "file" && key != "topology" && key != "npus" && key != "bandwidth" &&
        key != "latency")
      throw Error("network." + key + ": unknown field (preset, file, topology, npus, bandwidth, latency)");
  // The dimensions: from the base network, or from the longest list given.
  size_t dims = net.topology.size();
  for (const char* key : {"topology", "npus", "bandwidth", "latency"})
    if (n.contains(key) && n[key].is_array()) dims = std::max(dims, n[key].size());
  if (dims == 0)
    throw Error("network: no dimensions (give a preset, a file, or topology/npus/bandwidth/latency lists)");
  auto field = [&](const char* key, auto current) {
    std::vector<std::string> out;
    for (size_t d = 0; d < dims; ++d) {
      if (n.contains(key)) {
        const Json& v = n[key];
        if (v.is_array() && v.size() != dims)
          throw Error(std::string("network.") + key + ": " + std::to_string(v.size()) + " values for " +
                      std::to_string(dims) + " dimensions");
        out.push_back(describe(v.is_array() ? v[d] : v));
      } else if (d < net.topology.size()) {
        out.push_back(current(d));
      } else {
        throw Error(std::string("network.") + key + " is missing");
      }
    }
    return "[" + [&] {
      std::string s;
      for (size_t i = 0; i < out.size(); ++i) s += (i ? ", " : "") + out[i];
      return s;
    }() + "]";
  };
  const std::string yaml =
      "topology: " + field("topology", [&](size_t d) { return std::string(astra::topology_name(net.topology[d])); }) +
      "\nnpus_count: " + field("npus", [&](size_t d) { return std::to_string(net.npus[d]); }) +
      "\nbandwidth: " + field("bandwidth", [&](size_t d) { return format_number(net.bandwidth[d]); }) +
      "\nlatency: " + field("latency", [&](size_t d) { return format_number(net.latency[d]); }) + "\n";
  return astra::parse_network(yaml, "network");
}

// The system of a point: a preset's, a file, or the network preset's; then every other key set
// as in ASTRA-sim's system JSON and read back through parse_system.
astra::SystemConfig build_system(const Json& s, const Json& network, const std::string& base_dir, size_t dims) {
  if (!s.is_null() && !s.is_object()) throw Error("system: {preset: NAME} or {file: SYS.json}, plus system JSON keys");
  nlohmann::json json;
  std::string preset;
  if (s.is_object() && s.contains("file")) {
    const std::string path = resolve(base_dir, text_of(s["file"], "system.file"));
    try {
      json = nlohmann::json::parse(read_file(path, {}));
    } catch (const nlohmann::json::exception& e) {
      throw Error(path + ": " + e.what());
    }
  } else {
    if (s.is_object() && s.contains("preset"))
      preset = text_of(s["preset"], "system.preset");
    else if (network.is_object() && network.contains("preset"))
      preset = text_of(network["preset"], "network.preset");
    else if (!s.is_object() || !s.contains("scheduling-policy"))
      throw Error(
          "system: give a preset or a file (or a network preset, whose system is used), or a whole system JSON inline");
    if (!preset.empty()) json = nlohmann::json::parse(astra::format_system(chakra::cluster_preset(preset).system));
  }
  if (s.is_object())
    for (const auto& [key, v] : s.items())
      if (key != "file" && key != "preset") json[key] = nlohmann::json::parse(v.dump());
  astra::SystemConfig sys = astra::parse_system(json.dump(), "system");
  chakra::fit_system(sys, dims);
  return sys;
}

}  // namespace

// ---- spec ------------------------------------------------------------------------------------

Spec parse_spec(std::string_view yaml, const std::string& source, const std::string& base_dir) {
  const Json doc = parse_yaml(yaml, source);
  if (!doc.is_object()) fail(source, "a sweep spec is a mapping (workload:, network:, axes:, ...)");
  Spec spec;
  spec.source = source;
  spec.base_dir = base_dir;
  for (const auto& [key, v] : doc.items()) {
    if (key == "name" || key == "description") continue;
    if (key == "workload" || key == "network" || key == "system" || key == "backend" || key == "queues_per_dim" ||
        key == "slowdown") {
      spec.base[key] = v;
    } else if (key == "axes") {
      if (!v.is_object()) fail(source, "axes: a mapping of field: [values]");
      for (const auto& [field, values] : v.items()) {
        Axis a{field, values_of(values)};
        if (a.values.empty()) fail(source, "axis " + quoted_excerpt(field) + " has no values");
        spec.axes.push_back(std::move(a));
      }
    } else if (key == "zip") {
      if (!v.is_array()) fail(source, "zip: a list of groups, each a mapping of field: [values] of one length");
      for (const Json& group : v) {
        if (!group.is_object() || group.empty()) fail(source, "zip: each group is a mapping of field: [values]");
        std::vector<Axis> axes;
        for (const auto& [field, values] : group.items()) {
          axes.push_back({field, values_of(values)});
          if (axes.back().values.size() != axes.front().values.size())
            fail(source, "zip: " + quoted_excerpt(field) + " has " + std::to_string(axes.back().values.size()) +
                             " values, " + quoted_excerpt(axes.front().field) + " " +
                             std::to_string(axes.front().values.size()));
          if (axes.back().values.empty()) fail(source, "zip: " + quoted_excerpt(field) + " has no values");
        }
        spec.zips.push_back(std::move(axes));
      }
    } else if (key == "constraints") {
      for (const Json& c : values_of(v)) spec.constraints.push_back(text_of(c, source + ": constraints"));
    } else if (key == "sample") {
      if (v.is_object()) {
        for (const auto& [k, x] : v.items()) {
          if (k == "count")
            spec.sample = as_uint(x, source + ": sample.count");
          else if (k == "seed")
            spec.seed = as_uint(x, source + ": sample.seed");
          else
            fail(source, "sample." + k + ": unknown field (count, seed)");
        }
        if (!spec.sample) fail(source, "sample: count is missing");
      } else {
        spec.sample = as_uint(v, source + ": sample");
      }
    } else {
      fail(source, "unknown key " + quoted_excerpt(key) +
                       " (name, description, workload, network, system, backend, queues_per_dim, slowdown, axes, zip, "
                       "constraints, sample)");
    }
  }
  if (!spec.base.contains("workload")) fail(source, "workload is missing");
  if (!spec.base.contains("network")) fail(source, "network is missing");
  std::set<std::string> fields;
  auto check_field = [&](const std::string& f) {
    const std::string root = f.substr(0, f.find('.'));
    if (root != "workload" && root != "network" && root != "system" && root != "backend" && root != "queues_per_dim" &&
        root != "slowdown")
      fail(source, "axis " + quoted_excerpt(f) +
                       ": fields start with workload., network., system., backend, queues_per_dim or slowdown");
    if (!fields.insert(f).second) fail(source, "axis " + quoted_excerpt(f) + " given twice");
  };
  for (const Axis& a : spec.axes) check_field(a.field);
  for (const auto& z : spec.zips)
    for (const Axis& a : z) check_field(a.field);
  for (const std::string& c : spec.constraints) Expr(c, source).check();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(chakra::fnv1a(doc.dump())));
  spec.fingerprint = hex;
  return spec;
}

Spec load_spec(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_spec(read_file(path, {}), path, dir);
}

Json point_config(const Spec& spec, const Point& point) {
  Json config = spec.base;
  for (const auto& [field, value] : point.values) {
    Json* at = &config;
    for (const std::string& p : split_path(field)) {
      if (!at->is_object()) *at = Json::object();
      at = &(*at)[p];
    }
    *at = value;
  }
  return config;
}

Expansion expand(const Spec& spec, uint64_t max_product) {
  // The dimensions of the product: each axis, then each zip group.
  std::vector<uint64_t> radix;
  for (const Axis& a : spec.axes) radix.push_back(a.values.size());
  for (const auto& z : spec.zips) radix.push_back(z.front().values.size());
  Expansion out;
  out.product = 1;
  for (uint64_t r : radix) {
    if (out.product > max_product / r)
      fail(spec.source, "the axes make more than " + std::to_string(max_product) + " points");
    out.product *= r;
  }
  std::vector<Expr> constraints;
  for (const std::string& c : spec.constraints) constraints.emplace_back(c, spec.source);
  std::vector<Point> kept;
  std::vector<uint64_t> digit(radix.size(), 0);
  for (uint64_t k = 0; k < out.product; ++k) {
    Point p;
    size_t d = 0;
    for (const Axis& a : spec.axes) p.values.emplace_back(a.field, a.values[digit[d++]]);
    for (const auto& z : spec.zips) {
      for (const Axis& a : z) p.values.emplace_back(a.field, a.values[digit[d]]);
      ++d;
    }
    bool keep = true;
    if (!constraints.empty()) {
      const Json config = point_config(spec, p);
      const std::function<std::optional<Value>(const std::string&)> lookup =
          [&](const std::string& name) -> std::optional<Value> {
        const Json* hit = nullptr;
        for (const auto& [field, value] : p.values)
          if (field == name) hit = &value;
        if (!hit) {
          int matches = 0;
          for (const auto& [field, value] : p.values)
            if (field.size() > name.size() && field.compare(field.size() - name.size(), name.size(), name) == 0 &&
                field[field.size() - name.size() - 1] == '.')
              hit = &value, ++matches;
          if (matches > 1)
            fail(spec.source, "constraint name '" + name + "' matches several axes; write the whole field");
        }
        if (!hit) hit = find_path(config, name);
        return hit ? value_of(*hit) : std::nullopt;
      };
      for (Expr& e : constraints) keep = keep && e.holds(lookup);
    }
    if (keep)
      kept.push_back(std::move(p));
    else
      ++out.dropped;
    for (size_t i = radix.size(); i-- > 0;) {  // the last axis varies fastest
      if (++digit[i] < radix[i]) break;
      digit[i] = 0;
    }
  }
  if (spec.sample && *spec.sample < kept.size()) {
    // Floyd's algorithm: `sample` distinct positions, each subset equally likely.
    std::set<uint64_t> chosen;
    uint64_t state = spec.seed;
    const uint64_t n = kept.size();
    for (uint64_t j = n - *spec.sample; j < n; ++j) {
      const uint64_t t = splitmix(state) % (j + 1);
      if (!chosen.insert(t).second) chosen.insert(j);
    }
    std::vector<Point> sampled;
    for (uint64_t i : chosen) sampled.push_back(std::move(kept[i]));
    kept = std::move(sampled);
  }
  for (uint64_t i = 0; i < kept.size(); ++i) kept[i].index = i;
  out.points = std::move(kept);
  return out;
}

std::optional<Shard> parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string i(text.substr(0, slash)), k(text.substr(slash + 1));
  if (i.empty() || k.empty() || i.size() > 6 || k.size() > 6 ||
      i.find_first_not_of("0123456789") != std::string::npos || k.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  Shard s{static_cast<uint32_t>(std::stoul(i)), static_cast<uint32_t>(std::stoul(k))};
  if (s.count == 0 || s.index >= s.count) return std::nullopt;
  return s;
}

// ---- running ---------------------------------------------------------------------------------

// Workloads kept for the points that use them after, the most recently used first, up to
// kCacheBytes of traces (a suite's thousands of ranks of several workloads would fill memory).
struct Runner::Cache {
  static constexpr uint64_t kCacheBytes = uint64_t{512} << 20;
  std::mutex mutex;
  std::list<std::pair<std::string, std::shared_ptr<const Built>>> workloads;
  uint64_t bytes = 0;
  std::shared_ptr<const Built> find(const std::string& key) {
    for (auto it = workloads.begin(); it != workloads.end(); ++it)
      if (it->first == key) {
        workloads.splice(workloads.begin(), workloads, it);
        return it->second;
      }
    return nullptr;
  }
  void put(const std::string& key, std::shared_ptr<const Built> built) {
    if (find(key)) return;
    workloads.emplace_front(key, std::move(built));
    bytes += size_of(*workloads.front().second);
    while (bytes > kCacheBytes && workloads.size() > 1) {
      bytes -= size_of(*workloads.back().second);
      workloads.pop_back();
    }
  }
  static uint64_t size_of(const Built& b) {
    uint64_t n = 0;
    for (const std::string& e : b.encoded) n += e.size();
    return n;
  }
};

Runner::Runner(const Spec& spec, bool timing) : spec_(spec), timing_(timing), cache_(std::make_unique<Cache>()) {}
Runner::~Runner() = default;

std::vector<std::string> table_columns(const Spec& spec, bool timing) {
  std::vector<std::string> c = {"point", "sweep"};
  for (const Axis& a : spec.axes) c.push_back(a.field);
  for (const auto& z : spec.zips)
    for (const Axis& a : z) c.push_back(a.field);
  for (const char* f : {"npus", "step_ns", "compute_ns", "exposed_communication_ns", "non_compute_ns", "peak_mem_bytes",
                        "messages", "events", "network_bytes", "network_utilisation"})
    c.push_back(f);
  for (int t = 0; t <= astra::kCollectiveTypes; ++t)
    for (const char* f : {"_count", "_bytes", "_time_ns"}) c.push_back(std::string(sim::collective_totals_name(t)) + f);
  if (timing) c.push_back("sim_ms");
  c.push_back("error");
  return c;
}

Row Runner::row_of(const Point& point) const {
  Row row;
  row["point"] = point.index;
  row["sweep"] = spec_.fingerprint;
  for (const auto& [field, value] : point.values) row[field] = value;
  const std::vector<std::string> columns = table_columns(spec_, timing_);
  for (size_t i = 2 + point.values.size(); i < columns.size(); ++i) row[columns[i]] = nullptr;
  row["error"] = "";
  return row;
}

void Runner::build(const Point& point, Row& row, sim::SimInputs& in, sim::SimOptions& o,
                   std::shared_ptr<const Built>& built) const {
  const Json config = point_config(spec_, point);
  const std::string workload_key = config["workload"].dump();
  {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    built = cache_->find(workload_key);
  }
  if (!built) {
    built = build_workload(config["workload"], spec_.base_dir);
    std::lock_guard<std::mutex> lock(cache_->mutex);
    cache_->put(workload_key, built);
  }
  in.network = build_network(config["network"], spec_.base_dir, built->npus);
  in.system = build_system(config.contains("system") ? config["system"] : Json(), config["network"], spec_.base_dir,
                           in.network.npus.size());
  if (built->npus && in.network.total_npus() != built->npus)
    throw Error("the network has " + std::to_string(in.network.total_npus()) + " NPUs and the workload " +
                std::to_string(built->npus));
  in.workload = built->prefix.empty() ? "point " + std::to_string(point.index) : built->prefix;
  if (!built->encoded.empty()) in.encoded_traces = &built->encoded;
  in.make_trace = built->make;
  in.groups = built->groups;
  in.groups_source = built->groups_source;
  if (built->peak_memory) row["peak_mem_bytes"] = *built->peak_memory;
  if (config.contains("backend")) {
    const std::string b = text_of(config["backend"], "backend");
    bool found = false;
    for (const sim::BackendInfo& info : sim::network_backends())
      if (b == info.spelling) o.backend = info.backend, found = true;
    if (!found) throw Error("backend: '" + b + "' is not unaware or aware");
  }
  if (config.contains("queues_per_dim"))
    o.queues_per_dim =
        static_cast<uint32_t>(std::clamp<uint64_t>(as_uint(config["queues_per_dim"], "queues_per_dim"), 1, 1024));
  if (config.contains("slowdown"))
    o.slowdown = sim::parse_slowdowns(text_of(config["slowdown"], "slowdown"), "slowdown");
}

void Runner::fail(Row& row, const std::string& error) const {
  row["peak_mem_bytes"] = nullptr;  // a failed point has no figures
  row["error"] = error;
}

void Runner::finish(Row& row, const sim::SimResult& r, double ms) const {
  if (r.deadlock) {
    std::string why;
    for (const sim::NpuResult& n : r.npus)
      if (!n.stuck.empty()) {
        why = n.stuck.front();
        break;
      }
    return fail(row, "deadlock: " + why);
  }
  const double n = static_cast<double>(std::max<size_t>(1, r.npus.size()));
  double compute = 0, exposed = 0, non_compute = 0;
  sim::Tick step = 0;
  for (const sim::NpuResult& x : r.npus) {
    compute += static_cast<double>(x.compute), exposed += static_cast<double>(x.exposed_comm());
    non_compute += static_cast<double>(x.astra_exposed_comm);
    step = std::max(step, x.step());
  }
  row["npus"] = r.npus.size();
  row["step_ns"] = step;
  row["compute_ns"] = static_cast<uint64_t>(std::llround(compute / n));
  row["exposed_communication_ns"] = static_cast<uint64_t>(std::llround(exposed / n));
  row["non_compute_ns"] = static_cast<uint64_t>(std::llround(non_compute / n));
  row["messages"] = r.messages;
  row["events"] = r.events;
  Json bytes = Json::array(), utilisation = Json::array();  // per network dimension
  for (size_t d = 0; d < r.dimensions.size(); ++d) {
    bytes.push_back(r.dimensions[d].bytes);
    utilisation.push_back(dimension_utilisation(r, d));
  }
  row["network_bytes"] = std::move(bytes);
  row["network_utilisation"] = std::move(utilisation);
  for (int t = 0; t <= astra::kCollectiveTypes; ++t) {
    const std::string c = sim::collective_totals_name(t);
    row[c + "_count"] = r.collectives[t].count;
    row[c + "_bytes"] = r.collectives[t].bytes;
    row[c + "_time_ns"] = r.collectives[t].time;
  }
  if (timing_) row["sim_ms"] = std::round(ms * 1000) / 1000;
}

Row Runner::run(const Point& point) const {
  Row row = row_of(point);
  try {
    sim::SimInputs in;
    sim::SimOptions o;
    std::shared_ptr<const Built> built;
    build(point, row, in, o, built);
    o.compare_stall_modes = false;  // the table has no column for the other mode's figures
    const auto t0 = std::chrono::steady_clock::now();
    const sim::SimResult r = sim::simulate(in, o);
    finish(row, r, ms_since(t0));
  } catch (const std::exception& e) {  // chakra::Error, and anything else a point may raise
    fail(row, e.what());
  }
  return row;
}

std::optional<chakra::SimJob> Runner::job(const Point& point, Row& row) const {
  row = row_of(point);
  try {
    sim::SimInputs in;
    chakra::SimJob job;
    std::shared_ptr<const Built> built;
    build(point, row, in, job.options, built);
    job.options.compare_stall_modes = false;  // the table has no column for the other mode's figures
    if (built->encoded.empty() && !built->make)
      throw Error("workload.traces: traces read from files (" + built->prefix +
                  ".<npu>.et) run in chakra sweep, not here");
    job.traces = built->encoded;
    for (uint32_t r = 0; built->make && r < built->npus; ++r) job.traces.push_back(built->make(r));
    job.network = std::move(in.network);
    job.system = std::move(in.system);
    job.groups = std::move(in.groups);
    return job;
  } catch (const std::exception& e) {
    fail(row, e.what());
    return std::nullopt;
  }
}

}  // namespace chakra::sweep
