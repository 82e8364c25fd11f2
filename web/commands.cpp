// The app's commands by name, for scripts, tests and the page's header: the shell's rows here,
// each view's in its own file (View::add_commands); a new command is one row. App::command_usages()
// lists them (the tests enumerate it).
#include <charconv>

#include "app.h"
#include "app_impl.h"
#include "chakra/app/sim_presets.h"
#include "chakra/support/text.h"
#include "chakra/synth/synth.h"

namespace chakra_web {

std::optional<uint32_t> command_number(std::string_view word, uint32_t lo, uint32_t hi) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<int> command_run_id(std::string_view word) {
  const std::optional<uint32_t> v = command_number(word, 0, 99'999'999);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

namespace {

// "PRESET DP TP PP MICRO_BATCHES": the synthesis settings, then the workload (the start page's
// Llama example).
bool synthesize(AppContext& app, std::string_view args) {
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
  app.synth.preset = std::string(words[0]);
  app.synth.dp = values[0];
  app.synth.tp = values[1];
  app.synth.pp = values[2];
  app.synth.micro_batches = values[3];
  return app.generate_synthetic();
}

}  // namespace

void App::add_commands() {
  Impl& s = *impl_;
  auto& out = s.commands;
  out.push_back({"simulate", [this](std::string_view) { return run_simulation(); }});
  out.push_back({"cancel", [this](std::string_view) { return cancel_simulation(), true; }});
  out.push_back({"synthesize", [this](std::string_view) { return generate_synthetic(); }});
  out.push_back({"synthesize PRESET DP TP PP MICRO_BATCHES", [&s](std::string_view w) { return synthesize(s, w); }});
  out.push_back({"fit", [this](std::string_view) { return fit_network_to_ranks(), true; }});
  out.push_back({"clear", [this](std::string_view) { return clear(), true; }});
  out.push_back({"copy link", [this](std::string_view) { return copy_link(), true; }});
  out.push_back({"keys", [&s](std::string_view) { return s.show_keys = !s.show_keys, true; }});
  out.push_back({"slowdown SPEC", [&s](std::string_view w) { return s.runs.set_slowdown(std::string(w)); }});
  out.push_back({"save chart TITLE", [&s](std::string_view w) { return s.chart_to_save = std::string(w), true; }});
  out.push_back({"select POSITION", [&s](std::string_view w) {  // a node of the current rank, by position
                   const chakra::RankTrace* r = s.current_rank();
                   const std::optional<uint32_t> position =
                       r && r->trace.size() ? command_number(w, 0, r->trace.size() - 1) : std::nullopt;
                   if (!position) return false;
                   s.selected = *position;
                   return true;
                 }});
  std::string view_names;
  for (const auto& v : s.views) view_names += (view_names.empty() ? "" : "|") + std::string(v->name());
  out.push_back({"view " + view_names, [this](std::string_view w) { return set_view(w); }});
  out.push_back({"preset NAME", [&s](std::string_view w) {  // a cluster of assets/simulation/presets.json
                   for (const chakra::ClusterPreset& p : chakra::cluster_presets())
                     if (p.name == w) return s.runs.use_preset(p.name), true;
                   return false;
                 }});
}

namespace {

// The command's name: its usage up to the first argument word.
std::string_view command_name(std::string_view usage) {
  size_t end = 0;
  for (size_t at = 0; at <= usage.size();) {
    const size_t space = std::min(usage.find(' ', at), usage.size());
    const std::string_view word = usage.substr(at, space - at);
    if (word.empty() || std::isupper(static_cast<unsigned char>(word[0])) || word.find('|') != std::string_view::npos)
      break;
    end = space;
    at = space + 1;
  }
  return usage.substr(0, end);
}

bool takes_argument(std::string_view usage) { return command_name(usage).size() < usage.size(); }

}  // namespace

bool AppContext::command(std::string_view c) {
  // The longest name that fits: "export anonymized KEY" before "export anonymized".
  const Command* best = nullptr;
  std::string_view argument;
  for (const Command& cmd : commands) {
    const std::string_view name = command_name(cmd.usage);
    const bool fits = takes_argument(cmd.usage)
                          ? c.size() > name.size() + 1 && c.compare(0, name.size(), name) == 0 && c[name.size()] == ' '
                          : c == name;
    if (fits && (!best || name.size() > command_name(best->usage).size())) {
      best = &cmd;
      argument = takes_argument(cmd.usage) ? c.substr(name.size() + 1) : std::string_view();
    }
  }
  return best && best->run(argument);
}

bool App::command(const std::string& c) { return impl_->command(c); }

std::vector<std::string> App::command_usages() const {
  std::vector<std::string> out;
  for (const Command& c : impl_->commands) out.push_back(c.usage);
  return out;
}

}  // namespace chakra_web
