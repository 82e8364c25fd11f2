// The app's status as JSON, for the page's tests and its scripts (app_status_json): the shell's
// fields here, each view's by View::write_status, written by the core's writers where the CLI has
// one (simulate --json, info --json, analyze).
#include <chrono>

#include <imgui.h>

#include "app_impl.h"
#include "chakra/analysis/sim_report.h"
#include "chakra/app/sweep.h"
#include "chakra/format/json_writer.h"
#include "chakra/synth/synth.h"

namespace chakra_web {

namespace {
// The fields both statuses have: the error shown and how far opening files has got.
void write_progress(const App::Impl& s, bool busy, chakra::JsonWriter& w) {
  w.key("error").value(s.error);
  w.key("busy").value(busy);
  // The file being opened, else the next one queued: its name, size, phase and how far it got.
  const chakra::Workspace::Loading* file = s.loading         ? s.loading.get()
                                           : s.queue.empty() ? nullptr
                                                             : s.queue.front().file.get();
  const chakra::RankTrace* unchecked = nullptr;  // opened, its validation next
  for (const auto& r : s.workspace.ranks())
    if (!r->checked && !unchecked) unchecked = r.get();
  // Linking and converting in the background has no byte count: -1, as for gzip.
  const App::Impl::Converting* converting = file || unchecked || s.converting.empty() ? nullptr : &s.converting.front();
  w.key("loading").value_double(file ? file->fraction() : converting ? -1.0 : 1.0);
  w.key("loading_file")
      .value(file         ? file->name()
             : unchecked  ? unchecked->source
             : converting ? converting->files
                          : std::string());
  w.key("loading_bytes").value_uint(file ? file->size() : unchecked ? unchecked->bytes : 0);
  w.key("loading_phase").value(file ? file->phase() : unchecked ? "validating" : converting ? converting->phase : "");
  w.key("queued_files").value_uint(s.queue.size() - (file && !s.loading ? 1 : 0));  // waiting behind it
}
// The selected node, and the share link.
void write_selection_status(App::Impl& s, chakra::JsonWriter& w) {
  w.key("rank").value_uint(s.rank);
  w.key("selected")
      .value_int(s.selected && s.current_rank() ? static_cast<int64_t>(s.current_rank()->trace.id(*s.selected)) : -1);
  w.key("hash").value(chakra::encode_share_link(s.state()));    // what the address bar shows
  w.key("state").value(chakra::encode_share_state(s.state()));  // the same, readable
}

// The open ranks: where each came from, its checks and its summary (chakra info --json's).
void write_ranks_status(App::Impl& s, chakra::JsonWriter& w) {
  w.key("ranks").begin_array();
  for (const auto& r : s.workspace.ranks()) {
    w.begin_object();
    w.key("rank").value_uint(r->rank);
    w.key("source").value(r->source);
    w.key("bytes").value_uint(r->bytes);
    w.key("checked").value(r->checked);
    w.key("errors").value_uint(r->report.errors);
    w.key("warnings").value_uint(r->report.warnings + r->warnings.size());  // validation's and loading's
    w.key("load_warnings").begin_array();
    for (const std::string& x : r->warnings) w.value(x);
    w.end_array();
    w.key("summary");
    chakra::write_summary_json(r->summary, w);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

std::string App::brief_status_json() const {
  chakra::StringSink sink;
  chakra::JsonWriter w(sink);
  w.begin_object();
  write_progress(*impl_, busy(), w);
  w.key("ranks").value_uint(impl_->workspace.ranks().size());
  w.key("simulating").value(impl_->runs.running() != nullptr);
  w.key("last_run").value_int(impl_->runs.all().empty() ? 0 : impl_->runs.all().back()->id);
  w.key("view").value(impl_->views[impl_->view]->name());  // the Sweep view needs no traces: no start card over it
  w.end_object();
  w.flush();
  return sink.out;
}

std::string App::status_json() const {
  Impl& s = *impl_;
  chakra::StringSink sink;
  chakra::JsonWriter w(sink);
  w.begin_object();
  w.key("version").value(CHAKRA_VERSION);
  write_progress(s, busy(), w);
  w.key("view").value(s.views[s.view]->name());
  w.key("keys_shown").value(s.show_keys);
  for (size_t i = 0; i < s.views.size(); ++i) s.views[i]->write_status(w, i == s.view);
  s.sweeps.write_status(w);
  s.suites.write_status(w);
  write_selection_status(s, w);
  write_ranks_status(s, w);
  s.runs.write_status(w);
  w.key("log").begin_array();
  for (const std::string& l : s.log) w.value(l);
  w.end_array();
  w.end_object();
  w.flush();
  return sink.out;
}

}  // namespace chakra_web
