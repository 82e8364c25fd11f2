// Share links: the state of every view and setting as key/value pairs, and back.
#include <algorithm>
#include <cstdio>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "app_state.h"
#include "chakra/support/error.h"

namespace chakra_web {

using chakra::ShareState;

namespace {
std::string fingerprint_text(uint64_t fp) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fp));
  return text;
}
}  // namespace

ShareState App::Impl::state() const {
  ShareState s;
  s["v"] = std::string(view_entry(view).name);
  if (!workspace.ranks().empty()) s["r"] = std::to_string(rank);
  if (selected && current_rank() && *selected < current_rank()->trace.size())
    s["n"] = std::to_string(current_rank()->trace.id(*selected));
  if (!query.empty()) s["q"] = query;
  s["g.collapse"] = std::to_string(collapse_chains);
  if (ctrl_edges) s["g.ctrl"] = "1";
  if (show_critical) s["g.critical"] = "1";
  if (timeline.source) s["t.src"] = std::to_string(timeline.source);
  if (timeline.t1 > timeline.t0) {
    s["t.0"] = chakra::format_number(timeline.t0);
    s["t.1"] = chakra::format_number(timeline.t1);
  }
  if (!timeline.collapsed.empty()) {
    const std::vector<uint32_t> folded(timeline.collapsed.begin(), timeline.collapsed.end());
    s["t.fold"] = chakra::format_index_ranges(folded);
  }
  if (!timeline.pinned.empty()) {
    std::string pins;
    for (const chakra::TimelineTrackKey& k : timeline.pinned)
      pins += (pins.empty() ? "" : ",") + std::to_string(k.group) + "." + std::to_string(k.lane_class) + "." + std::to_string(k.lane);
    s["t.pin"] = pins;
  }
  settings_state(sim, "sim.", s);
  // Each run's settings, so that a reopened link makes the same runs (ids 1..n, as here: runs
  // are numbered from 1 again whenever they are cleared). About 16 keys a run: past kLinkRuns
  // the link would outgrow what links may hold, so it keeps only the current settings.
  constexpr size_t kLinkRuns = 12;
  if (!runs.empty() && runs.size() <= kLinkRuns) {
    s["runs"] = std::to_string(runs.size());
    for (size_t k = 0; k < runs.size(); ++k) settings_state(runs[k]->settings, "run" + std::to_string(k + 1) + ".", s);
  }
  // The Sweep view's spec, when it was edited (the example is what a fresh page shows anyway).
  if (!sweep.spec_text.empty() && sweep.spec_text != sweep_example_spec()) s["sweep"] = sweep.spec_text;
  if (synth.active) {
    s["synth"] = synth.preset;
    s["synth.layers"] = std::to_string(synth.layers);
    s["synth.dp"] = std::to_string(synth.dp);
    s["synth.tp"] = std::to_string(synth.tp);
    s["synth.pp"] = std::to_string(synth.pp);
    if (synth.fsdp) s["synth.fsdp"] = "1";
  } else if (!files.empty()) {  // the files by count and content, never by name
    s["files.n"] = std::to_string(files.size());
    s["files.fp"] = fingerprint_text(files_fingerprint);
  }
  return s;
}

void App::Impl::apply(const ShareState& s) {
  // Everything is read and checked before anything changes, so a bad link changes nothing.
  static const std::vector<std::string_view> view_names = [] {
    std::vector<std::string_view> names;
    for (const ViewEntry& e : kViews) names.push_back(e.name);
    return names;
  }();
  std::string v = chakra::share_choice(s, "v", view_names, "overview");
  int64_t r = chakra::share_int(s, "r", 0, UINT32_MAX, rank);
  const int64_t files_n = chakra::share_int(s, "files.n", 0, 1000000, 0);
  std::optional<uint64_t> node;
  if (s.count("n")) node = static_cast<uint64_t>(chakra::share_int(s, "n", 0, INT64_MAX, 0));
  int collapse = static_cast<int>(chakra::share_int(s, "g.collapse", 0, 1000000, 8));
  int source = static_cast<int>(chakra::share_int(s, "t.src", 0, 1000000, 0));
  double t0 = chakra::share_number(s, "t.0", -1e300, 1e300, 0), t1 = chakra::share_number(s, "t.1", -1e300, 1e300, 0);
  const std::vector<uint32_t> folded = chakra::share_index_ranges(s, "t.fold", UINT32_MAX - 1, 1 << 16);
  std::vector<chakra::TimelineTrackKey> pinned;
  for (const std::vector<uint32_t>& k : chakra::share_tuples(s, "t.pin", 3, UINT32_MAX - 1, 256))
    pinned.push_back({k[0], k[1], k[2]});
  SynthSettings syn = synth;
  bool want_synth = s.count("synth");
  if (want_synth) {
    syn.preset = s.at("synth");
    syn.layers = static_cast<int>(chakra::share_int(s, "synth.layers", 1, 1000, syn.layers));
    syn.dp = static_cast<int>(chakra::share_int(s, "synth.dp", 1, 4096, syn.dp));
    syn.tp = static_cast<int>(chakra::share_int(s, "synth.tp", 1, 4096, syn.tp));
    syn.pp = static_cast<int>(chakra::share_int(s, "synth.pp", 1, 4096, syn.pp));
    syn.fsdp = chakra::share_int(s, "synth.fsdp", 0, 1, 0) == 1;
  }
  // The settings are validated here: a bad one throws before anything changed.
  std::optional<SimSettings> settings;
  if (s.count("sim.topo")) settings = settings_from_state(s, "sim.");
  std::deque<SimSettings> link_run_settings;
  const int64_t run_count = chakra::share_int(s, "runs", 0, 64, 0);
  for (int64_t k = 1; k <= run_count; ++k) link_run_settings.push_back(settings_from_state(s, "run" + std::to_string(k) + "."));
  if (s.count("sweep") && s.at("sweep").size() > (1u << 16)) throw chakra::Error("share link: 'sweep' is longer than 64 KiB");
  if (settings) sim = *settings;
  if (s.count("sweep")) sweep.spec_text = s.at("sweep");  // read back as it was; runs when asked
  for (const ViewEntry& e : kViews)
    if (v == e.name) view = e.view;
  view_changed = true;
  collapse_chains = collapse;
  ctrl_edges = s.count("g.ctrl") && s.at("g.ctrl") == "1";
  show_critical = s.count("g.critical") && s.at("g.critical") == "1";
  query = s.count("q") ? s.at("q") : "";
  timeline.source = source;
  timeline.t0 = t0;
  timeline.t1 = t1;
  timeline.collapsed = std::set<uint32_t>(folded.begin(), folded.end());
  timeline.pinned = std::move(pinned);
  bool same_workload = synth.active && syn.preset == synth.preset && syn.layers == synth.layers && syn.dp == synth.dp &&
                       syn.tp == synth.tp && syn.pp == synth.pp && syn.fsdp == synth.fsdp;
  if (want_synth && !same_workload) {  // regenerate only when the link names another workload
    synth = syn;
    generate_synthetic();
  }
  rank = static_cast<uint32_t>(r);
  selected.reset();
  deferred_selection.reset();
  if (node) {
    if (RankCache* c = cache()) {
      if (auto pos = c->index->find(*node)) selected = *pos;
    } else {
      deferred_selection = std::make_pair(rank, *node);  // once the link's files are dropped
    }
  }
  if (s.count("files.n") && !want_synth) {
    const std::string n = s.at("files.n"), fp = s.count("files.fp") ? s.at("files.fp") : "?";
    if (workspace.ranks().empty())
      note("this link was made with " + n + " files (fingerprint " + fp + "): drop the same files to see it");
    else if (fp != fingerprint_text(files_fingerprint) || n != std::to_string(files.size()))
      note("the files open here are not the link's (" + n + " files, fingerprint " + fp + "): what it shows may differ");
  }
  // The link's runs are made again from their settings once the traces are open (results are not
  // in links). Links written before runs were listed name only the settings of the run shown.
  link_runs.clear();
  if (runs.empty() && !running) {
    if (!link_run_settings.empty()) link_runs = std::move(link_run_settings);
    else if (source > 0) link_runs.push_back(sim);
    if (!link_runs.empty()) next_run_id = 1;  // the link's runs are numbered 1..n
  }
  link_files = static_cast<size_t>(files_n);
}

std::string App::share_hash() const { return chakra::encode_share_link(impl_->state()); }

void App::apply_hash(const std::string& hash) {
  Impl& s = *impl_;
  if (busy()) {
    s.pending_hash = hash;  // after the files being opened
    return;
  }
  try {
    s.apply(chakra::decode_share_state(hash));
    s.error.clear();
  } catch (const std::exception& e) {
    s.fail(e.what());
  }
}

}  // namespace chakra_web
