#include "runs.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "chakra/analysis/sim_report.h"
#include "chakra/app/sim_presets.h"
#include "chakra/format/json_writer.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "widgets.h"

namespace chakra_web {

namespace astra = chakra::astra;
namespace sim = chakra::sim;

namespace {
const char* kCollectiveKeys[] = {"ar", "ag", "rs", "a2a"};

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out;
}

std::string run_label(const SimSettings& settings) {
  std::string dims;
  for (size_t d = 0; d < settings.network.npus.size(); ++d)
    dims += (d ? " x " : "") + std::to_string(settings.network.npus[d]) + " " +
            astra::topology_name(settings.network.topology[d]) + " " +
            chakra::format_number(settings.network.bandwidth[d]) + " GB/s";
  return settings.preset + ": " + dims + (settings.congestion_aware ? ", congestion-aware" : "") +
         (settings.stalls_wait ? ", host stalls as waits" : "") +
         (settings.faster_name.empty()
              ? ""
              : ", *" + settings.faster_name + "* " + chakra::format_number(settings.faster_by) + "x faster") +
         (settings.slowdown.empty()
              ? ""
              : ", slowdowns " +
                    (settings.slowdown.size() > 40 ? settings.slowdown.substr(0, 37) + "..." : settings.slowdown));
}
}  // namespace

Runs::Runs(Platform& platform, chakra::Workspace& workspace, std::function<void(const std::string&)> note)
    : platform_(platform), workspace_(workspace), note_(std::move(note)) {
  use_preset(settings.preset);
}

void Runs::use_preset(const std::string& name) {
  const chakra::ClusterPreset& p = chakra::cluster_preset(name);
  settings.preset = name;
  settings.network = p.network;
  settings.system = p.system;
}

bool Runs::set_slowdown(const std::string& spec) {
  try {
    sim::parse_slowdowns(spec, "slowdowns");
    settings.slowdown = spec;
    slowdown_error.clear();
    return true;
  } catch (const chakra::Error& e) {
    slowdown_error = e.what();
    note_("error: " + slowdown_error);
    return false;
  }
}

void Runs::fit_to_ranks() {
  settings.network = chakra::fit_network(settings.network, workspace_.ranks().size());
  chakra::fit_system(settings.system, settings.network.topology.size());
}

bool Runs::start(const SimSettings& settings) {
  error.clear();
  try {
    if (running_) throw chakra::Error("a simulation is running; wait for it or cancel it");
    if (workspace_.ranks().empty()) throw chakra::Error("load traces (or generate a workload) first");
    sim::SimOptions options;
    options.backend = settings.congestion_aware ? sim::Backend::CongestionAware : sim::Backend::CongestionUnaware;
    options.record_spans = true;
    if (!settings.faster_name.empty()) options.speedups.push_back({settings.faster_name, settings.faster_by});
    options.slowdown = sim::parse_slowdowns(settings.slowdown, "slowdowns");
    options.stalls = settings.stalls_wait ? sim::StallMode::Wait : sim::StallMode::Keep;
    chakra::SimJob job = workspace_.simulation_job(settings.network, settings.system, options);  // checks the ranks
    auto run = std::make_unique<SimRun>();
    run->id = next_id_++;
    run->settings = settings;
    run->label = run_label(settings);
    running_since_ = std::chrono::steady_clock::now();
    if (platform_.runs_simulations()) {
      running_ = std::move(run);  // first: the platform may report a failure at once
      running_fraction_ = 0;
      note_("run " + std::to_string(running_->id) + " started");
      platform_.start_simulation(std::move(job));
      return true;
    }
    run->result = chakra::run_job(job);
    finish(std::move(run));
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    note_("error: " + error);
    return false;
  }
}

void Runs::finish(std::unique_ptr<SimRun> run) {
  run->wall_ms = running_seconds() * 1e3;
  note_("run " + std::to_string(run->id) + ": " + format_duration(static_cast<double>(run->result.end()), "ns") +
        (run->result.deadlock ? " (deadlock)" : ""));
  compared = shown;
  shown = run->id;
  runs_.push_back(std::move(run));
}

void Runs::progress(uint64_t nodes_done, uint64_t nodes_total) {
  if (running_ && nodes_total)
    running_fraction_ = std::min(1.0, static_cast<double>(nodes_done) / static_cast<double>(nodes_total));
}

void Runs::finished(sim::SimResult result) {
  if (!running_) return;
  std::unique_ptr<SimRun> run = std::move(running_);
  run->result = std::move(result);
  finish(std::move(run));
}

void Runs::failed(const std::string& message) {
  running_.reset();
  error = message;
  note_("error: " + message);
}

void Runs::cancel() {
  if (!running_) return;
  platform_.cancel_simulation();
  note_("run " + std::to_string(running_->id) + " cancelled");
  running_.reset();
}

double Runs::running_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - running_since_).count();
}

SimRun* Runs::by_id(int id) const {
  for (const auto& r : runs_)
    if (r->id == id) return r.get();
  return nullptr;
}

const chakra::TimelineModel* Runs::timeline(int id) {
  SimRun* run = by_id(id);
  if (!run) return nullptr;
  if (!run->timeline) {
    run->timeline =
        std::make_unique<chakra::TimelineModel>(chakra::timeline_of_spans(run->result.spans, workspace_.traces()));
  }
  return run->timeline.get();
}

void Runs::clear() {
  cancel();
  runs_.clear();
  link_runs.clear();
  next_id_ = 1;  // a clean slate: the next run is run 1 again
}

// ---- share links -----------------------------------------------------------------------------

void Runs::write_state(chakra::ShareState& s) const {
  settings_state(settings, "sim.", s);
  // Each run's settings, so that a reopened link makes the same runs (ids 1..n, as here: runs
  // are numbered from 1 again whenever they are cleared). About 16 keys a run: past kLinkRuns
  // the link would outgrow what links may hold, so it keeps only the current settings.
  constexpr size_t kLinkRuns = 12;
  if (!runs_.empty() && runs_.size() <= kLinkRuns) {
    s["runs"] = std::to_string(runs_.size());
    for (size_t k = 0; k < runs_.size(); ++k)
      settings_state(runs_[k]->settings, "run" + std::to_string(k + 1) + ".", s);
  }
}

std::function<void()> Runs::read_state(const chakra::ShareState& s, int shown_run) {
  // The settings are validated here: a bad one throws before anything changed.
  std::optional<SimSettings> current;
  if (s.count("sim.topo")) current = settings_from_state(s, "sim.");
  std::deque<SimSettings> listed;
  const int64_t count = chakra::share_int(s, "runs", 0, 64, 0);
  for (int64_t k = 1; k <= count; ++k) listed.push_back(settings_from_state(s, "run" + std::to_string(k) + "."));
  return [this, current = std::move(current), listed = std::move(listed), shown_run]() mutable {
    if (current) settings = *current;
    // The link's runs are made again from their settings once the traces are open (results are
    // not in links). Links written before runs were listed name only the settings of the run shown.
    link_runs.clear();
    if (runs_.empty() && !running_) {
      if (!listed.empty())
        link_runs = std::move(listed);
      else if (shown_run > 0)
        link_runs.push_back(settings);
      if (!link_runs.empty()) next_id_ = 1;  // the link's runs are numbered 1..n
    }
  };
}

void Runs::settings_state(const SimSettings& sim, const std::string& prefix, chakra::ShareState& s) {
  const astra::NetworkConfig& net = sim.network;
  std::vector<std::string> topo, npus, bw, lat;
  for (size_t d = 0; d < net.topology.size(); ++d) {
    topo.push_back(astra::topology_name(net.topology[d]));
    npus.push_back(std::to_string(net.npus[d]));
    bw.push_back(chakra::format_number(net.bandwidth[d]));
    lat.push_back(chakra::format_number(net.latency[d]));
  }
  s[prefix + "preset"] = sim.preset;
  s[prefix + "topo"] = join(topo);
  s[prefix + "npus"] = join(npus);
  s[prefix + "bw"] = join(bw);
  s[prefix + "lat"] = join(lat);
  for (int c = 0; c < astra::kCollectiveTypes; ++c) {
    std::vector<std::string> names;
    for (const auto& a : sim.system.algorithms[c]) names.push_back(astra::algorithm_name(a));
    if (!names.empty()) s[prefix + kCollectiveKeys[c]] = join(names);
  }
  s[prefix + "splits"] = std::to_string(sim.system.preferred_dataset_splits);
  s[prefix + "chunks"] = std::to_string(sim.system.active_chunks_per_dimension);
  s[prefix + "sched"] = sim.system.scheduling == astra::SchedulingPolicy::FIFO ? "FIFO" : "LIFO";
  s[prefix + "delay"] = chakra::format_number(sim.system.endpoint_delay);
  if (sim.system.peak_perf > 0) s[prefix + "peak"] = chakra::format_number(sim.system.peak_perf);
  if (sim.system.local_mem_bw > 0) s[prefix + "mem"] = chakra::format_number(sim.system.local_mem_bw);
  if (sim.system.roofline) s[prefix + "roofline"] = "1";
  if (sim.congestion_aware) s[prefix + "backend"] = "aware";
  if (sim.stalls_wait) s[prefix + "stalls"] = "wait";
  if (!sim.slowdown.empty()) s[prefix + "slow"] = sim.slowdown;
  if (!sim.faster_name.empty()) {
    s[prefix + "fast"] = sim.faster_name;
    s[prefix + "fastx"] = chakra::format_number(sim.faster_by);
  }
}

SimSettings Runs::settings_from_state(const chakra::ShareState& s, const std::string& prefix) {
  // Through the same readers as dropped config files, so a link cannot hold what a file could not.
  auto list = [&](const char* name) {
    const std::string key = prefix + name;
    auto it = s.find(key);
    if (it == s.end()) throw chakra::Error("share link: '" + key + "' is missing");
    return "[" + it->second + "]";
  };
  std::string yaml = "topology: " + list("topo") + "\nnpus_count: " + list("npus") + "\nbandwidth: " + list("bw") +
                     "\nlatency: " + list("lat") + "\n";
  astra::NetworkConfig net = astra::parse_network(yaml, "share link");
  std::string json = "{";
  auto add = [&](const std::string& key, const std::string& value) {
    json += (json.size() > 1 ? "," : "") + ("\"" + key + "\":" + value);
  };
  for (int c = 0; c < astra::kCollectiveTypes; ++c) {
    auto it = s.find(prefix + kCollectiveKeys[c]);
    if (it == s.end()) continue;
    std::string names;
    for (std::string_view piece : chakra::Split(it->second, ',')) {
      const std::string n(piece);
      for (char ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          throw chakra::Error("share link: bad algorithm name '" + n + "'");
      names += (names.empty() ? "\"" : ",\"") + n + "\"";
    }
    add(std::string(astra::collective_name(static_cast<astra::Collective>(c))) + "-implementation", "[" + names + "]");
  }
  add("preferred-dataset-splits", std::to_string(chakra::share_int(s, prefix + "splits", 1, 1 << 16, 4)));
  add("active-chunks-per-dimension", std::to_string(chakra::share_int(s, prefix + "chunks", 1, 1 << 16, 1)));
  add("scheduling-policy", "\"" + chakra::share_choice(s, prefix + "sched", {"LIFO", "FIFO"}, "LIFO") + "\"");
  add("endpoint-delay", std::to_string(chakra::share_int(s, prefix + "delay", 0, 1000000000, 10)));
  if (s.count(prefix + "peak"))
    add("peak-perf", chakra::format_number(chakra::share_number(s, prefix + "peak", 1e-9, 1e9, 0)));
  if (s.count(prefix + "mem"))
    add("local-mem-bw", chakra::format_number(chakra::share_number(s, prefix + "mem", 1e-9, 1e9, 0)));
  if (chakra::share_int(s, prefix + "roofline", 0, 1, 0)) add("roofline-enabled", "1");
  json += "}";
  astra::SystemConfig sys = astra::parse_system(json, "share link");
  bool aware = chakra::share_choice(s, prefix + "backend", {"aware", "unaware"}, "unaware") == "aware";
  SimSettings out;
  out.network = std::move(net);
  out.system = std::move(sys);
  out.congestion_aware = aware;
  out.stalls_wait = chakra::share_choice(s, prefix + "stalls", {"wait", "keep"}, "keep") == "wait";
  out.preset = s.count(prefix + "preset") ? s.at(prefix + "preset").substr(0, 64) : "(link)";
  if (s.count(prefix + "slow")) {
    out.slowdown = s.at(prefix + "slow").substr(0, 4096);
    sim::parse_slowdowns(out.slowdown, "share link: slowdowns");  // refused here, not at the run
  }
  if (s.count(prefix + "fast")) {
    out.faster_name = s.at(prefix + "fast").substr(0, 64);
    out.faster_by = chakra::share_number(s, prefix + "fastx", 1e-6, 1e6, 1);
  }
  return out;
}

void Runs::write_status(chakra::JsonWriter& w) const {
  w.key("network").value(astra::format_network(settings.network));
  w.key("system").value(astra::format_system(settings.system));
  w.key("backend").value(settings.congestion_aware ? "aware" : "unaware");
  w.key("simulating");
  if (running_)
    w.value_double(running_fraction_);
  else
    w.value_null();
  w.key("sim_error").value(error);
  w.key("runs").begin_array();
  for (const auto& run : runs_) {
    w.begin_object();
    w.key("id").value_int(run->id);
    w.key("label").value(run->label);
    w.key("result");  // as chakra simulate --json writes it
    chakra::write_sim_json(run->result, w);
    w.end_object();
  }
  w.end_array();
}

}  // namespace chakra_web
