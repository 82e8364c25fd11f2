#include "chakra/app/suite.h"

#include <cmath>
#include <filesystem>

#include "chakra/app/sim_presets.h"
#include "chakra/astra/config.h"
#include "chakra/format/io.h"
#include "chakra/format/yaml.h"
#include "chakra/support/error.h"
#include "chakra/support/sha256.h"
#include "chakra/support/text.h"
#include "app/sweep_parts.h"

namespace chakra::suite {
namespace {

using sweep::fail;

// `over` merged into `base`: mappings key by key, anything else replaced.
Json merged(Json base, const Json& over) {
  if (!base.is_object() || !over.is_object()) return over;
  for (const auto& [key, v] : over.items()) base[key] = base.contains(key) ? merged(base[key], v) : v;
  return base;
}

// The network `system` gives for `npus`, inline as a sweep takes it: its outer dimension grows
// or shrinks to the scale (chakra::fit_network).
Json fitted_network(const System& system, uint32_t npus) {
  const astra::NetworkConfig net = fit_network(astra::parse_network(system.network, system.name + " network"), npus);
  Json out = Json::object();
  out["topology"] = Json::array();
  for (auto t : net.topology) out["topology"].push_back(astra::topology_name(t));
  out["npus"] = net.npus;
  out["bandwidth"] = net.bandwidth;
  out["latency"] = net.latency;
  return out;
}

double geometric_mean(const std::vector<double>& v) {
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return v.empty() ? 0 : std::exp(log_sum / double(v.size()));
}

}  // namespace

Suite parse_suite(std::string_view yaml, const std::string& source, const std::string& base_dir) {
  const Json doc = parse_yaml(yaml, source);
  if (!doc.is_object()) fail(source, "a suite is a mapping (suite:, reference:, workloads:)");
  Suite s;
  s.source = source;
  s.base_dir = base_dir;
  s.text = std::string(yaml);
  s.hash = to_hex(sha256(yaml));
  for (const auto& [key, v] : doc.items()) {
    if (key == "suite") {
      if (!v.is_string()) fail(source, "suite: the suite's version, e.g. chakra-suite-v1");
      s.version = v.get<std::string>();
    } else if (key == "description") {
      continue;
    } else if (key == "reference") {
      const bool preset = v.is_object() && v.size() == 1 && v.contains("preset") && v["preset"].is_string();
      const bool files = v.is_object() && v.size() == 2 && v.contains("network") && v["network"].is_string() &&
                         v.contains("system") && v["system"].is_string();
      if (!preset && !files) fail(source, "reference: {preset: NAME} or {network: NET.yml, system: SYS.json}");
      s.reference = v;
    } else if (key == "workloads") {
      if (!v.is_array() || v.empty()) fail(source, "workloads: a list of workloads");
      for (const Json& w : v) {
        Workload out;
        for (const auto& [field, x] : w.items()) {
          if (field == "name" && x.is_string())
            out.name = x.get<std::string>();
          else if (field == "class" && x.is_string())
            out.klass = x.get<std::string>();
          else if (field == "workload" && x.is_object())
            out.base = x;
          else if (field == "scales" && x.is_object())
            for (const auto& [npus, set] : x.items()) {
              const bool digits =
                  !npus.empty() && npus.size() <= 5 && npus.find_first_not_of("0123456789") == std::string::npos;
              const uint64_t n = digits ? std::stoull(npus) : 0;
              if (n < 2 || n > 65536)
                fail(source, "workload " + out.name + ": scale '" + npus + "' is not a number of NPUs (2..65536)");
              out.scale[static_cast<uint32_t>(n)] = set;
            }
          else
            fail(source, "workload " + out.name + ": unknown or malformed field '" + field +
                             "' (name, class, workload, scales)");
        }
        if (out.name.empty() || out.klass.empty() || out.base.is_null() || out.scale.empty())
          fail(source, "a workload needs name, class, workload and scales");
        for (const Workload& other : s.workloads)
          if (other.name == out.name) fail(source, "workload " + out.name + " is defined twice");
        s.workloads.push_back(std::move(out));
      }
    } else {
      fail(source, "unknown key '" + key + "' (suite, description, reference, workloads)");
    }
  }
  if (s.version.empty()) fail(source, "suite: missing (the suite's version)");
  if (s.reference.is_null()) fail(source, "reference: missing (the system every score is relative to)");
  if (s.workloads.empty()) fail(source, "workloads: missing");
  return s;
}

Suite load_suite(const std::string& path) {
  return parse_suite(read_file(path), path, std::filesystem::path(path).parent_path().string());
}

extern const char* const kSuiteV1Yaml;

Suite builtin_suite(const std::string& base_dir) {
  return parse_suite(kSuiteV1Yaml, "chakra-suite-v1.yaml (built in)", base_dir);
}

std::string builtin_suite_dir(const std::string& exe_dir, const std::string& source_assets) {
  std::error_code ec;
  const std::filesystem::path installed = std::filesystem::path(exe_dir) / "../share/chakrakit/suite";
  return std::filesystem::exists(installed / "../examples", ec) ? installed.lexically_normal().string()
                                                                : source_assets + "/suite";
}

std::vector<Entry> entries(const Suite& suite) {
  std::vector<Entry> out;
  for (const Workload& w : suite.workloads)
    for (const auto& [npus, set] : w.scale) {
      Entry e;
      e.workload = w.name;
      e.klass = w.klass;
      e.npus = npus;
      e.config = merged(w.base, set);
      e.hash = to_hex(sha256(e.config.dump()));
      out.push_back(std::move(e));
    }
  return out;
}

std::optional<std::string> measured_run_folder(const Suite& suite, const Entry& e) {
  if (!e.config.contains("project") || !e.config["project"].is_object()) return std::nullopt;
  return sweep::resolve(suite.base_dir, e.config["project"].value("traces", ""));
}

std::optional<MeasuredRun> measured_run(const Suite& suite, const Entry& e) {
  const std::optional<std::string> folder = measured_run_folder(suite, e);
  if (!folder) return std::nullopt;
  const Json& p = e.config["project"];
  MeasuredRun run;
  run.folder = *folder;
  try {
    const std::string found = sweep::folder_sha256(run.folder);
    if (p.contains("sha256") && p["sha256"] != found)
      run.problem = "its files' SHA-256 is " + found + ", not the " + p["sha256"].dump() + " the suite names";
  } catch (const Error& err) {
    run.problem = err.what();
  }
  return run;
}

System system_from_files(const std::string& name, const std::string& network_yml, const std::string& system_json) {
  System s{name, read_file(network_yml), read_file(system_json)};
  astra::parse_network(s.network, network_yml);  // refused here, naming the file, if it is none
  astra::parse_system(s.system, system_json);
  return s;
}

System system_from_preset(const std::string& preset) {
  const ClusterPreset& p = cluster_preset(preset);
  return {preset, astra::format_network(p.network), astra::format_system(p.system)};
}

System reference_system(const Suite& suite) {
  const Json& r = suite.reference;
  System s = r.contains("preset")
                 ? system_from_preset(r["preset"].get<std::string>())
                 : system_from_files("", sweep::resolve(suite.base_dir, r["network"].get<std::string>()),
                                     sweep::resolve(suite.base_dir, r["system"].get<std::string>()));
  s.name = "reference";
  return s;
}

sweep::Spec spec_for(const Suite& suite, const std::vector<System>& systems) {
  sweep::Spec spec;
  spec.source = suite.source;
  spec.base_dir = suite.base_dir;
  std::vector<sweep::Axis> zip = {{"workload", {}}, {"network", {}}, {"system", {}}};
  std::string fingerprint = suite.hash;
  for (const System& system : systems) {
    fingerprint += system.network + system.system;
    const Json sys = Json::parse(system.system);
    for (const Entry& e : entries(suite)) {
      zip[0].values.push_back(e.config);
      zip[1].values.push_back(fitted_network(system, e.npus));
      // Synthesized steps carry operation counts and tensor sizes: their compute runs on the
      // system's roofline (peak-perf, local-mem-bw). Measured runs keep their measured times,
      // whatever the submitted JSON says.
      Json with = sys;
      if (e.config.contains("synth"))
        with["roofline-enabled"] = 1;
      else
        with.erase("roofline-enabled");
      zip[2].values.push_back(std::move(with));
    }
  }
  for (const sweep::Axis& a : zip) spec.base[a.field] = a.values.front();
  spec.zips.push_back(std::move(zip));
  spec.fingerprint = to_hex(sha256(fingerprint)).substr(0, 16);
  return spec;
}

std::string entry_job(const Suite& suite, const std::vector<System>& systems, size_t entry) {
  Json job = {{"suite", suite.text}, {"source", suite.source}, {"base_dir", suite.base_dir}, {"entry", entry}};
  job["systems"] = Json::array();
  for (const System& s : systems)
    job["systems"].push_back({{"name", s.name}, {"network", s.network}, {"system", s.system}});
  return job.dump();
}

std::vector<sweep::Row> run_entry_job(std::string_view text) {
  Json job;
  try {
    job = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error(std::string("suite entry job: not JSON: ") + e.what());
  }
  if (!job.is_object() || !job.contains("suite") || !job.contains("systems") || !job["systems"].is_array() ||
      job["systems"].empty() || !job.contains("entry") || !job["entry"].is_number_unsigned())
    throw Error("suite entry job: not one (suite, source, base_dir, systems, entry)");
  const Suite suite =
      parse_suite(job["suite"].get<std::string>(), job.value("source", "suite"), job.value("base_dir", ""));
  std::vector<System> systems;
  for (const Json& s : job["systems"]) systems.push_back(recorded_system({{"system", s}}, "suite entry job"));
  const size_t n = entries(suite).size(), entry = job["entry"].get<size_t>();
  if (entry >= n) throw Error("suite entry job: entry " + std::to_string(entry) + " of " + std::to_string(n));
  const sweep::Spec spec = spec_for(suite, systems);
  const sweep::Runner runner(spec, false);
  const sweep::Expansion e = sweep::expand(spec);
  std::vector<sweep::Row> rows;
  for (size_t k = 0; k < systems.size(); ++k) rows.push_back(runner.run(e.points[k * n + entry]));
  return rows;
}

Json result(const Suite& suite, const System& system, const std::vector<sweep::Row>& rows,
            const std::vector<sweep::Row>& reference_rows) {
  const std::vector<Entry> all = entries(suite);
  if (rows.size() != all.size() || reference_rows.size() != all.size())
    throw Error("suite: " + std::to_string(rows.size()) + " results for " + std::to_string(all.size()) + " entries");
  Json out = Json::object();
  out["suite"] = suite.version;
  out["suite_hash"] = suite.hash;
  out["tool"] = std::string("chakrakit ") + CHAKRA_VERSION;
  out["system"] = {{"name", system.name},
                   {"network", system.network},
                   {"system", system.system},
                   {"hash", to_hex(sha256(system.network + "\n--\n" + system.system))}};
  std::map<std::string, std::vector<double>> by_workload;
  std::map<std::string, std::string> class_of;
  Json list = Json::array();
  for (size_t i = 0; i < all.size(); ++i) {
    const Entry& e = all[i];
    for (const sweep::Row* r : {&rows[i], &reference_rows[i]})
      if (!(*r)["error"].get<std::string>().empty())
        throw Error("suite: " + e.workload + " at " + std::to_string(e.npus) + " NPUs failed" +
                    (r == &rows[i] ? "" : " on the reference system") + ": " + (*r)["error"].get<std::string>());
    const uint64_t step = rows[i]["step_ns"].get<uint64_t>(), reference = reference_rows[i]["step_ns"].get<uint64_t>();
    const double score = step == 0 ? 0 : double(reference) / double(step);
    const double exposed = rows[i]["exposed_communication_ns"].get<double>();
    list.push_back({{"workload", e.workload},
                    {"class", e.klass},
                    {"npus", e.npus},
                    {"hash", e.hash},
                    {"step_ns", step},
                    {"reference_step_ns", reference},
                    {"score", score},
                    {"exposed_communication_share", step == 0 ? 0.0 : exposed / double(step)},
                    {"network_utilisation", rows[i]["network_utilisation"]}});
    by_workload[e.workload].push_back(score);
    class_of[e.workload] = e.klass;
  }
  out["entries"] = list;
  std::map<std::string, std::vector<double>> by_class;
  Json workloads = Json::object();
  for (const auto& [name, scores] : by_workload) {
    workloads[name] = geometric_mean(scores);
    by_class[class_of[name]].push_back(workloads[name].get<double>());
  }
  out["workloads"] = workloads;
  Json classes = Json::object();
  std::vector<double> class_scores;
  for (const auto& [name, scores] : by_class) {
    classes[name] = geometric_mean(scores);
    class_scores.push_back(classes[name].get<double>());
  }
  out["classes"] = classes;
  out["overall"] = geometric_mean(class_scores);
  return out;
}

Json shard_part(const Suite& suite, const System& system, sweep::Shard shard, const std::vector<sweep::Row>& rows,
                const std::vector<sweep::Row>& reference_rows) {
  const size_t n = entries(suite).size();
  Json list = Json::array();
  for (size_t i = shard.index, k = 0; i < n; i += shard.count, ++k)
    list.push_back({{"entry", i}, {"system", rows.at(k)}, {"reference", reference_rows.at(k)}});
  return {{"suite_part", suite.version},
          {"suite_hash", suite.hash},
          {"shard", {{"index", shard.index}, {"count", shard.count}}},
          {"system", {{"name", system.name}, {"network", system.network}, {"system", system.system}}},
          {"rows", list}};
}

Json merge_parts(const Suite& suite, const std::vector<std::string>& texts, const std::vector<std::string>& sources) {
  if (texts.empty()) throw Error("suite merge: no parts given");
  const size_t n = entries(suite).size();
  std::vector<sweep::Row> rows(n), reference(n);
  std::vector<std::string> shard_source;  // by shard index: the part that gave it
  Json system;
  for (size_t p = 0; p < texts.size(); ++p) {
    const std::string& src = sources.at(p);
    Json part;
    try {
      part = Json::parse(texts[p]);
    } catch (const Json::exception& e) {
      throw Error(src + ": not a part of a suite run (not JSON: " + e.what() + ")");
    }
    auto need = [&](bool ok, const std::string& what) {
      if (!ok) throw Error(src + ": not a part of a suite run (" + what + ")");
    };
    need(part.is_object() && part.contains("suite_part"), "no suite_part: a result of chakra suite run --shard i/K?");
    need(part.value("suite_hash", Json()).is_string(), "suite_hash");
    if (part["suite_hash"] != suite.hash)
      throw Error(src + ": a part of a run of another suite definition (" + part["suite_hash"].get<std::string>() +
                  ") than " + suite.source + " (" + suite.hash + ")");
    need(part.value("system", Json()).is_object(), "system");
    if (p == 0) system = part["system"];
    if (part["system"] != system) throw Error(src + ": a part of a run on another system than " + sources[0]);
    const Json& sh = part.value("shard", Json());
    need(sh.is_object() && sh.value("index", Json()).is_number_unsigned() &&
             sh.value("count", Json()).is_number_unsigned(),
         "shard");
    const sweep::Shard shard{sh["index"].get<uint32_t>(), sh["count"].get<uint32_t>()};
    need(shard.count > 0 && shard.index < shard.count, "shard");
    if (p == 0) shard_source.assign(shard.count, "");
    const std::string name = std::to_string(shard.index) + "/" + std::to_string(shard.count);
    if (shard.count != shard_source.size())
      throw Error(src + ": shard " + name + ", but " + sources[0] + " is one of " +
                  std::to_string(shard_source.size()));
    if (!shard_source[shard.index].empty())
      throw Error(src + ": shard " + name + " given twice (also " + shard_source[shard.index] + ")");
    shard_source[shard.index] = src;
    need(part.value("rows", Json()).is_array(), "rows");
    size_t expected = shard.index;
    for (const Json& r : part["rows"]) {
      need(r.is_object() && r.value("entry", Json()) == expected && expected < n,
           "rows are not those of entries " + name + " of the suite's " + std::to_string(n));
      need(r.value("system", Json()).is_object() && r.value("reference", Json()).is_object(), "a row");
      rows[expected] = r["system"];
      reference[expected] = r["reference"];
      expected += shard.count;
    }
    need(expected >= n, "rows are not those of entries " + name + " of the suite's " + std::to_string(n));
  }
  std::string missing;
  for (size_t i = 0; i < shard_source.size(); ++i)
    if (shard_source[i].empty())
      missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(shard_source.size());
  if (!missing.empty())
    throw Error("suite merge: shard " + missing + " missing: give the parts of every shard of the run");
  return result(suite, recorded_system({{"system", system}}, sources[0]), rows, reference);
}

Json read_result(std::string_view text, const std::string& source) {
  try {
    return checked_result(Json::parse(text), source);
  } catch (const Json::exception& e) {
    throw Error(source + ": not a suite result (not JSON: " + e.what() + ")");
  }
}

Json checked_result(Json r, const std::string& source) {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw Error(source + ": not a suite result (" + what + ")");
  };
  need(r.is_object(), "not a JSON object");
  for (const char* key : {"suite", "suite_hash", "tool"}) need(r.contains(key) && r[key].is_string(), key);
  need(r.contains("system") && r["system"].is_object(), "system");
  for (const char* key : {"name", "network", "system", "hash"})
    need(r["system"].contains(key) && r["system"][key].is_string(), std::string("system.") + key);
  need(r.contains("entries") && r["entries"].is_array() && !r["entries"].empty(), "entries");
  for (const Json& e : r["entries"]) {
    need(e.is_object(), "an entry that is no object");
    for (const char* key : {"workload", "class", "hash"}) need(e.contains(key) && e[key].is_string(), key);
    for (const char* key : {"npus", "step_ns", "reference_step_ns"})
      need(e.contains(key) && e[key].is_number_unsigned(), key);
    for (const char* key : {"score", "exposed_communication_share"}) need(e.contains(key) && e[key].is_number(), key);
    need(e.contains("network_utilisation") && e["network_utilisation"].is_array(), "network_utilisation");
    for (const Json& u : e["network_utilisation"]) need(u.is_number(), "network_utilisation");
  }
  for (const char* key : {"workloads", "classes"}) {
    need(r.contains(key) && r[key].is_object() && !r[key].empty(), key);
    for (const auto& [name, v] : r[key].items()) need(v.is_number(), std::string(key) + "." + name);
  }
  need(r.contains("overall") && r["overall"].is_number(), "overall");
  return r;
}

System recorded_system(const Json& r, const std::string& source) {
  if (!r.is_object() || !r.contains("system") || !r["system"].is_object() || !r["system"].contains("network") ||
      !r["system"].contains("system") || !r["system"]["network"].is_string() || !r["system"]["system"].is_string())
    throw Error(source + ": not a suite result (no system.network and system.system)");
  return {r["system"].value("name", ""), r["system"]["network"].get<std::string>(),
          r["system"]["system"].get<std::string>()};
}

std::string first_difference(const Json& claimed, const Json& rerun, const std::string& path) {
  if (claimed.type() != rerun.type() && !(claimed.is_number() && rerun.is_number()))
    return (path.empty() ? "the result" : path) + ": " + claimed.dump() + " in the result, " + rerun.dump() +
           " run again";
  if (claimed.is_object()) {
    for (const auto& [key, v] : rerun.items()) {
      const std::string at = path.empty() ? key : path + "." + key;
      if (!claimed.contains(key)) return at + ": missing from the result";
      if (std::string d = first_difference(claimed[key], v, at); !d.empty()) return d;
    }
    for (const auto& [key, v] : claimed.items())
      if (!rerun.contains(key)) return (path.empty() ? key : path + "." + key) + ": not something a run writes";
    return "";
  }
  if (claimed.is_array()) {
    if (claimed.size() != rerun.size())
      return path + ": " + std::to_string(claimed.size()) + " items in the result, " + std::to_string(rerun.size()) +
             " run again";
    for (size_t i = 0; i < claimed.size(); ++i)
      if (std::string d = first_difference(claimed[i], rerun[i], path + "[" + std::to_string(i) + "]"); !d.empty())
        return d;
    return "";
  }
  if (claimed != rerun) return path + ": " + claimed.dump() + " in the result, " + rerun.dump() + " run again";
  return "";
}

std::string network_utilisation_text(const Json& entry) {
  std::string out;
  for (const Json& u : entry["network_utilisation"])
    appendf(out, "%s%.1f%%", out.empty() ? "" : " / ", 100 * u.get<double>());
  return out;
}

std::string result_text(const Json& r) {
  std::string out;
  appendf(out, "%s on %s (system %s)\n\n%-22s %-14s %6s %14s %14s %8s %9s  %s\n", r["suite"].get<std::string>().c_str(),
          r["system"]["name"].get<std::string>().c_str(), r["system"]["hash"].get<std::string>().substr(0, 12).c_str(),
          "workload", "class", "NPUs", "step (ms)", "reference (ms)", "score", "exposed", "network busy per dimension");
  for (const Json& e : r["entries"])
    appendf(out, "%-22s %-14s %6u %14.3f %14.3f %8.3f %8.1f%%  %s\n", e["workload"].get<std::string>().c_str(),
            e["class"].get<std::string>().c_str(), e["npus"].get<uint32_t>(),
            double(e["step_ns"].get<uint64_t>()) / 1e6, double(e["reference_step_ns"].get<uint64_t>()) / 1e6,
            e["score"].get<double>(), 100 * e["exposed_communication_share"].get<double>(),
            network_utilisation_text(e).c_str());
  out += "\nscores (geometric means of speed-ups over the reference):\n";
  for (const auto& [name, score] : r["workloads"].items())
    appendf(out, "  workload %-20s %.3f\n", name.c_str(), score.get<double>());
  for (const auto& [name, score] : r["classes"].items())
    appendf(out, "  class    %-20s %.3f\n", name.c_str(), score.get<double>());
  appendf(out, "  overall  %-20s %.3f\n", "", r["overall"].get<double>());
  return out;
}

}  // namespace chakra::suite
