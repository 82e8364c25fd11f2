#include "suites.h"

#include "chakra/format/json_writer.h"
#include "chakra/support/error.h"

namespace chakra_web {

namespace suite = chakra::suite;

Suites::Suites(Platform& platform, std::function<void(const std::string&)> note)
    : platform_(platform), note_(std::move(note)) {}

bool Suites::start(const suite::System& system) {
  cancel();
  error.clear();
  try {
    auto s = std::make_unique<suite::Suite>(suite::builtin_suite(platform_.suite_dir()));
    systems_ = {system, suite::reference_system(*s)};
    entries_ = suite::entries(*s);
    entries = entries_.size();
    suite_ = std::move(s);
  } catch (const std::exception& e) {
    error = e.what();
    note_("error: " + error);
    return false;
  }
  rows_.assign(systems_.size(), std::vector<chakra::sweep::Row>(entries));
  done = next_ = 0;
  ++generation_;
  running = true;
  system_name = system.name;
  started_ = std::chrono::steady_clock::now();
  note_("suite: " + suite_->version + " on " + system.name + ", " + std::to_string(entries) + " entries");
  return true;
}

void Suites::cancel() {
  if (!running) return;
  platform_.cancel_suite();
  ++generation_;
  running = false;
  note_("suite cancelled: " + std::to_string(done) + " of " + std::to_string(entries) + " entries done");
}

void Suites::clear() {
  cancel();
  ++generation_;
  suite_.reset();
  entries_.clear();
  rows_.clear();
  results.clear();
  entries = done = 0;
  error.clear();
  seconds = 0;
  ++version;
}

bool Suites::work_waiting() const { return running && next_ < entries; }

void Suites::work(double budget_ms) {
  if (!running) return;
  if (platform_.runs_suite_entries()) {  // every entry at once: the host's pool queues them
    for (; next_ < entries; ++next_) {
      std::vector<std::string> runs;
      if (auto folder = suite::measured_run_folder(*suite_, entries_[next_])) runs.push_back(*folder);
      platform_.start_suite_entry(next_, generation_, suite::entry_job(*suite_, systems_, next_), runs);
    }
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  while (running && next_ < entries &&
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() < budget_ms) {
    const size_t entry = next_++;
    try {
      entry_done(entry, suite::run_entry_job(suite::entry_job(*suite_, systems_, entry)));
    } catch (const std::exception& e) {
      entry_failed(entry, generation_, e.what());
    }
  }
}

void Suites::entry_finished(uint64_t entry, uint64_t generation, const std::string& rows_json) {
  if (generation != generation_ || !running || entry >= entries) return;
  std::vector<chakra::sweep::Row> rows;
  try {
    const suite::Json j = suite::Json::parse(rows_json);
    if (!j.is_array() || j.size() != systems_.size()) throw chakra::Error("not one row per system");
    rows.assign(j.begin(), j.end());
  } catch (const std::exception& e) {
    return entry_failed(entry, generation, std::string("suite entry: ") + e.what());
  }
  entry_done(entry, std::move(rows));
}

void Suites::entry_failed(uint64_t entry, uint64_t generation, const std::string& message) {
  if (generation != generation_ || !running || entry >= entries) return;
  cancel();  // a suite's score needs every entry: the rest would be wasted
  error = entries_[entry].workload + " at " + std::to_string(entries_[entry].npus) + " NPUs: " + message;
  note_("error: suite: " + error);
}

void Suites::entry_done(uint64_t entry, std::vector<chakra::sweep::Row> rows) {
  for (size_t k = 0; k < rows.size(); ++k) rows_[k][entry] = std::move(rows[k]);
  if (++done < entries) return;
  running = false;
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  try {
    add({"run", suite::result(*suite_, systems_[0], rows_[0], rows_[1])});
    note_("suite: " + systems_[0].name + " scores " + std::to_string(results.back().result["overall"].get<double>()));
  } catch (const std::exception& e) {
    error = e.what();
    note_("error: " + error);
  }
}

void Suites::open_result(chakra::Workspace::SuiteResultFile file) { add({file.name, std::move(file.result)}); }

void Suites::add(Shown shown) {
  const suite::Json& system = shown.result["system"]["hash"];
  std::erase_if(results, [&](const Shown& s) { return s.result["system"]["hash"] == system; });
  results.push_back(std::move(shown));
  ++version;
}

void Suites::write_status(chakra::JsonWriter& w) const {
  // The run going on, and each result shown: its overall and per-class scores.
  w.key("suite").begin_object();
  w.key("running").value(running);
  w.key("entries").value_uint(entries);
  w.key("done").value_uint(done);
  w.key("error").value(error);
  w.key("results").begin_array();
  for (const Shown& s : results) {
    w.begin_object();
    w.key("source").value(s.source);
    w.key("system").value(s.result["system"]["name"].get<std::string>());
    for (const char* key : {"hash", "network", "system"})  // what chakra suite run takes, to compare
      w.key(std::string("system_") + key).value(s.result["system"][key].get<std::string>());
    w.key("overall").value_double(s.result["overall"].get<double>());
    w.key("classes").begin_object();
    for (const auto& [name, score] : s.result["classes"].items()) w.key(name).value_double(score.get<double>());
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace chakra_web
