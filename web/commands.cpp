// The app's commands by name, for scripts, tests and the page's header: one table of
// {usage, run}; a new command is one row. App::command_usages() lists them (the tests enumerate it).
#include <charconv>

#include "app.h"
#include "app_state.h"
#include "chakra/analysis/analysis_report.h"
#include "chakra/app/sim_presets.h"
#include "chakra/support/text.h"
#include "chakra/synth/synth.h"

namespace chakra_web {

namespace {

// A whole number from lo to hi written out in a command (nothing else in the word), or none.
std::optional<uint32_t> command_number(std::string_view word, uint32_t lo, uint32_t hi) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

// A run's id as a command writes it: up to 8 digits.
std::optional<int> run_id(std::string_view word) {
  const std::optional<uint32_t> v = command_number(word, 0, 99'999'999);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

}  // namespace

// Each row: its usage (the words before the first capital are its name; capitals, or a word list
// a|b, stand for its argument) and what it does with the argument ("" when it takes none).
struct App::Command {
  const char* usage;
  bool (*run)(App& app, std::string_view argument);
};

std::span<const App::Command> App::commands() {
  using Tab = Impl::AnalysisTab;
  static const Command kCommands[] = {
      {"simulate", [](App& a, std::string_view) { return a.run_simulation(); }},
      {"cancel", [](App& a, std::string_view) { return a.cancel_simulation(), true; }},
      {"synthesize", [](App& a, std::string_view) { return a.generate_synthetic(); }},
      {"synthesize PRESET DP TP PP MICRO_BATCHES", [](App& a, std::string_view w) { return a.impl_->synthesize_command(w); }},
      {"fit", [](App& a, std::string_view) { return a.fit_network_to_ranks(), true; }},
      {"clear", [](App& a, std::string_view) { return a.clear(), true; }},
      {"copy link", [](App& a, std::string_view) { return a.copy_link(), true; }},
      {"keys", [](App& a, std::string_view) { return a.impl_->show_keys = !a.impl_->show_keys, true; }},
      {"sweep run", [](App& a, std::string_view) { return a.impl_->start_sweep(); }},
      {"sweep cancel", [](App& a, std::string_view) { return a.impl_->cancel_sweep(), true; }},
      {"sweep example", [](App& a, std::string_view) { return a.impl_->sweep.spec_text = sweep_example_spec(), a.set_view(View::Sweep), true; }},
      {"sweep spec YAML", [](App& a, std::string_view w) { return a.impl_->sweep.spec_text = std::string(w), true; }},
      {"slowdown SPEC", [](App& a, std::string_view w) { return a.impl_->set_slowdown(std::string(w)); }},
      {"export anonymized", [](App& a, std::string_view) { return a.impl_->export_anonymized(""); }},
      {"export anonymized KEY", [](App& a, std::string_view w) { return a.impl_->export_anonymized(std::string(w)); }},
      {"export analysis json|csv", [](App& a, std::string_view w) { return a.impl_->export_analysis(w); }},
      {"save chart TITLE", [](App& a, std::string_view w) { return a.impl_->chart_to_save = std::string(w), true; }},
      {"select POSITION", [](App& a, std::string_view w) {  // a node of the current rank, by position
         const chakra::RankTrace* r = a.impl_->current_rank();
         const std::optional<uint32_t> position = r && r->trace.size() ? command_number(w, 0, r->trace.size() - 1) : std::nullopt;
         if (!position) return false;
         a.impl_->selected = *position;
         return true;
       }},
      {"view overview|nodes|graph|timeline|simulation|analysis|sweep", [](App& a, std::string_view w) {
         for (const ViewEntry& v : kViews)
           if (w == v.name) return a.set_view(v.view), true;
         return false;
       }},
      {"preset NAME", [](App& a, std::string_view w) {  // a cluster of assets/simulation/presets.json
         for (const chakra::sim::ClusterPreset& p : chakra::sim::cluster_presets())
           if (p.name == w) return a.impl_->use_preset(p.name), true;
         return false;
       }},
      {"analysis tab breakdown|path|collectives|compare", [](App& a, std::string_view w) {
         if (w != "breakdown" && w != "path" && w != "collectives" && w != "compare") return false;
         a.impl_->analysis_tab = w == "breakdown" ? Tab::Breakdown : w == "path" ? Tab::CriticalPath : w == "collectives" ? Tab::Collectives : Tab::Compare;
         a.impl_->analysis_tab_requested = true;
         a.set_view(View::Analysis);
         return true;
       }},
      {"analysis RUN", [](App& a, std::string_view w) {  // the Analysis view of run RUN (0: the measured times)
         const std::optional<int> n = run_id(w);
         if (!n || (*n != 0 && !a.impl_->run_by_id(*n))) return false;
         a.impl_->analysis_source = *n;
         a.set_view(View::Analysis);
         return true;
       }},
      {"compare RUN", [](App& a, std::string_view w) {  // the Analysis view's second source: a run, 0 the measured times, "none"
         if (w == "none") return a.impl_->analysis_compare = -1, true;
         const std::optional<int> n = run_id(w);
         if (!n || (*n != 0 && !a.impl_->run_by_id(*n))) return false;
         a.impl_->analysis_compare = *n;
         return true;
       }},
      {"timeline RUN", [](App& a, std::string_view w) {  // a run's timeline; 0: the recorded times
         const std::optional<int> n = run_id(w);
         return n && a.impl_->open_in_timeline(*n);
       }},
  };
  return kCommands;
}

namespace {

// The command's name: its usage up to the first argument word.
std::string_view command_name(std::string_view usage) {
  size_t end = 0;
  for (size_t at = 0; at <= usage.size();) {
    const size_t space = std::min(usage.find(' ', at), usage.size());
    const std::string_view word = usage.substr(at, space - at);
    if (word.empty() || std::isupper(static_cast<unsigned char>(word[0])) || word.find('|') != std::string_view::npos) break;
    end = space;
    at = space + 1;
  }
  return usage.substr(0, end);
}

bool takes_argument(std::string_view usage) { return command_name(usage).size() < usage.size(); }

}  // namespace

bool App::command(const std::string& c) {
  // The longest name that fits: "export anonymized KEY" before "export anonymized".
  const Command* best = nullptr;
  std::string_view argument;
  for (const Command& cmd : commands()) {
    const std::string_view name = command_name(cmd.usage);
    const bool fits = takes_argument(cmd.usage) ? c.size() > name.size() + 1 && c.compare(0, name.size(), name) == 0 && c[name.size()] == ' '
                                                : c == name;
    if (fits && (!best || name.size() > command_name(best->usage).size())) {
      best = &cmd;
      argument = takes_argument(cmd.usage) ? std::string_view(c).substr(name.size() + 1) : std::string_view();
    }
  }
  return best && best->run(*this, argument);
}

std::vector<std::string> App::command_usages() {
  std::vector<std::string> out;
  for (const Command& c : commands()) out.emplace_back(c.usage);
  return out;
}

// "PRESET DP TP PP MICRO_BATCHES": the synthesis settings, then the workload (the start page's
// Llama example).
bool App::Impl::synthesize_command(std::string_view args) {
  std::vector<std::string_view> words;
  for (std::string_view w : chakra::Split(args, ' '))
    if (!w.empty()) words.push_back(w);
  if (words.size() != 5) return false;
  const std::vector<std::string> presets = chakra::synth::preset_names();
  if (std::find(presets.begin(), presets.end(), words[0]) == presets.end()) return false;
  int values[4];
  for (int i = 0; i < 4; ++i) {
    const std::optional<uint32_t> v = command_number(words[i + 1], 1, 4096);
    if (!v) return false;
    values[i] = static_cast<int>(*v);
  }
  synth.preset = std::string(words[0]);
  synth.dp = values[0];
  synth.tp = values[1];
  synth.pp = values[2];
  synth.micro_batches = values[3];
  return generate_synthetic();
}

// The Analysis view's measured figures as chakra analyze writes them: --json (every analysis) or
// --csv (the breakdown per rank).
bool App::Impl::export_analysis(std::string_view format) {
  if (format != "json" && format != "csv") return false;
  if (workspace.ranks().empty()) {
    note("error: nothing loaded to analyse");
    return false;
  }
  const AnalysisCache& a = analysis();
  std::vector<chakra::AnalyzedRank> ranks;
  for (size_t i = 0; i < workspace.ranks().size(); ++i) {
    const chakra::RankTrace& r = *workspace.ranks()[i];
    ranks.push_back({r.rank, r.source, &r.trace, &a.ranks[i], &a.stalls[i]});
  }
  if (format == "json") platform.download("analysis.json", chakra::analysis_json(ranks, {}));
  else platform.download("breakdown.csv", chakra::breakdown_csv(ranks));
  note(std::string("exported ") + (format == "json" ? "analysis.json (as chakra analyze --json)" : "breakdown.csv (as chakra analyze --csv)"));
  return true;
}

}  // namespace chakra_web
