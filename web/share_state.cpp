// Share links: the shell's keys (the view shown, the selection, the workload, the runs) and each
// view's own (View::write_state / read_state), as key/value pairs, and back.
#include <algorithm>
#include <cstdio>

#include "app_impl.h"
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
  s["v"] = std::string(views[view]->name());
  if (!workspace.ranks().empty()) s["r"] = std::to_string(rank);
  if (selected && current_rank() && *selected < current_rank()->trace.size())
    s["n"] = std::to_string(current_rank()->trace.id(*selected));
  if (shown_run) s["t.src"] = std::to_string(shown_run);
  for (const auto& v : views) v->write_state(s);
  runs.write_state(s);
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
  std::vector<std::string_view> view_names;
  for (const auto& v : views) view_names.push_back(v->name());
  const std::string v = chakra::share_choice(s, "v", view_names, "overview");
  int64_t r = chakra::share_int(s, "r", 0, UINT32_MAX, rank);
  const int64_t files_n = chakra::share_int(s, "files.n", 0, 1000000, 0);
  std::optional<uint64_t> node;
  if (s.count("n")) node = static_cast<uint64_t>(chakra::share_int(s, "n", 0, INT64_MAX, 0));
  const int source = static_cast<int>(chakra::share_int(s, "t.src", 0, 1000000, 0));
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
  std::vector<std::function<void()>> appliers;
  for (const auto& view : views)
    if (auto apply_view = view->read_state(s)) appliers.push_back(std::move(apply_view));
  std::function<void()> apply_runs = runs.read_state(s, source);

  apply_runs();  // before a workload is made (that fits the settings' compute model to it), and
                 // before the views' (a suite run takes the cluster it sets)
  for (const auto& apply_view : appliers) apply_view();
  show_view(v);
  shown_run = source;
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
      note("the files open here are not the link's (" + n + " files, fingerprint " + fp +
           "): what it shows may differ");
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
