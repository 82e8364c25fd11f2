#include "cli.h"

#include <sys/wait.h>
#include <unistd.h>

#if defined(__GLIBC__) && !defined(__EMSCRIPTEN__)
#endif

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "chakra/app/workspace.h"
#include "chakra/astra/config.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/error.h"
#include "chakra/support/text.h"
#include "chakra/trace/trace.h"

namespace cli {

Args::Args(std::string prog, std::string description) : prog_(std::move(prog)), description_(std::move(description)) {}

Args& Args::flag(const std::string& name, const std::string& help) {
  specs_.push_back({name, "", help, "", false, false, false, false});
  return *this;
}

Args& Args::option(const std::string& name, const std::string& metavar, const std::string& help,
                   const std::string& default_value, bool required) {
  specs_.push_back({name, metavar, help, default_value, true, required, false, false});
  return *this;
}

Args& Args::positional(const std::string& name, const std::string& help, bool required, bool repeated) {
  specs_.push_back({name, name, help, "", true, required, true, repeated});
  return *this;
}

Args& Args::alias(const std::string& short_name, const std::string& name) {
  aliases_[short_name] = name;
  return *this;
}

Args& Args::epilog(const std::string& text) {
  epilog_ = text;
  return *this;
}

Args& Args::allow_abbreviations() {
  abbreviations_ = true;
  return *this;
}

const Args::Spec* Args::find_option(const std::string& given) const {
  auto alias = aliases_.find(given);
  const std::string& name = alias != aliases_.end() ? alias->second : given;
  const Spec* prefix_match = nullptr;
  int prefix_matches = 0;
  for (const Spec& s : specs_) {
    if (s.is_positional) continue;
    if (s.name == name) return &s;
    if (abbreviations_ && s.name.compare(0, name.size(), name) == 0) {
      prefix_match = &s;
      ++prefix_matches;
    }
  }
  if (prefix_matches > 1) fail("ambiguous option: " + name);
  return prefix_match;
}

void Args::parse(int argc, char** argv) {
  std::vector<const Spec*> positional_specs;
  for (const Spec& s : specs_)
    if (s.is_positional) positional_specs.push_back(&s);
  size_t next_positional = 0;
  bool options_done = false;

  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (!options_done && (arg == "-h" || arg == "--help")) {
      std::cout << help();
      std::exit(kOk);
    }
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && arg.size() > 1 && arg[0] == '-' && arg != "-") {
      std::string name = arg, value;
      bool inline_value = false;
      if (auto eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        inline_value = true;
      }
      const Spec* spec = find_option(name);
      if (!spec) fail("unrecognized argument: " + arg);
      if (!spec->takes_value) {
        if (inline_value) fail("option " + spec->name + " takes no value");
        values_[spec->name] = "1";
        continue;
      }
      if (!inline_value) {
        if (i + 1 >= argc) fail("option " + spec->name + " expects a value (" + spec->metavar + ")");
        value = argv[++i];
      }
      values_[spec->name] = value;
      continue;
    }
    if (next_positional >= positional_specs.size()) fail("unexpected argument: " + arg);
    const Spec* spec = positional_specs[next_positional];
    positionals_[spec->name].push_back(arg);
    if (!spec->repeated) ++next_positional;
  }

  std::vector<std::string> missing;
  for (const Spec& s : specs_) {
    if (!s.required) continue;
    if (s.is_positional ? positionals_[s.name].empty() : !values_.count(s.name)) missing.push_back(s.name);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    fail("missing required argument" + std::string(missing.size() > 1 ? "s: " : ": ") + list);
  }
}

bool Args::has(const std::string& name) const { return values_.count(name) > 0; }

const std::string& Args::get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  for (const Spec& s : specs_)
    if (s.name == name) return s.default_value;
  static const std::string empty;
  return empty;
}

uint64_t Args::get_uint(const std::string& name, uint64_t max) const {
  const std::string& v = get(name);
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || v[0] == '-') fail(name + " expects a non-negative integer, got '" + v + "'");
  if (errno == ERANGE || n > max) fail(name + " is too large: at most " + std::to_string(max) + ", got '" + v + "'");
  return n;
}

double Args::get_positive_double(const std::string& name) const {
  const std::string& v = get(name);
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(d) || !(d > 0))
    fail(name + " expects a positive number, got '" + v + "'");
  return d;
}

const std::vector<std::string>& Args::values(const std::string& positional) const {
  static const std::vector<std::string> empty;
  auto it = positionals_.find(positional);
  return it == positionals_.end() ? empty : it->second;
}

std::string Args::usage() const {
  std::string u = "usage: " + prog_ + " [-h]";
  for (const Spec& s : specs_) {
    if (s.is_positional) continue;
    std::string part = s.name + (s.takes_value ? " " + s.metavar : "");
    u += s.required ? " " + part : " [" + part + "]";
  }
  for (const Spec& s : specs_) {
    if (!s.is_positional) continue;
    std::string part = s.repeated ? s.name + " [" + s.name + " ...]" : s.name;
    u += s.required ? " " + part : " [" + part + "]";
  }
  return u + "\n";
}

std::string Args::help() const {
  std::string h = usage() + "\n" + description_ + "\n";
  auto row = [&](const std::string& left, const std::string& text) {
    std::string line = "  " + left;
    if (line.size() < 24)
      line.resize(24, ' ');
    else
      line += "\n" + std::string(24, ' ');
    h += line + text + "\n";
  };
  bool any_positional = false;
  for (const Spec& s : specs_) any_positional |= s.is_positional;
  if (any_positional) {
    h += "\narguments:\n";
    for (const Spec& s : specs_)
      if (s.is_positional) row(s.name, s.help);
  }
  h += "\noptions:\n";
  row("-h, --help", "show this help and exit");
  for (const Spec& s : specs_) {
    if (s.is_positional) continue;
    std::string text = s.help;
    if (!s.default_value.empty()) text += " (default: " + s.default_value + ")";
    if (s.required) text += " (required)";
    std::string names = s.name;
    for (const auto& [short_name, target] : aliases_)
      if (target == s.name) names = short_name + ", " + names;
    row(names + (s.takes_value ? " " + s.metavar : ""), text);
  }
  if (!epilog_.empty()) h += "\n" + epilog_ + "\n";
  return h;
}

void Args::fail(const std::string& message) const {
  std::cerr << usage() << prog_ << ": error: " << message << "\n";
  std::exit(kUsage);
}

// ---------------------------------------------------------------------------------------------

namespace {
std::atomic<int> g_interrupts{0};

extern "C" void on_interrupt(int) {
  if (g_interrupts.fetch_add(1) >= 1) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}
}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_interrupt);
  // A reader that goes away (`chakra … 2>&1 | head`) makes writes to it fail instead of killing
  // the process mid-write, which would leave its temporary output files behind.
  std::signal(SIGPIPE, SIG_IGN);
}
bool interrupted() { return g_interrupts.load() > 0; }

namespace {
// CHAKRA_PROGRESS_FD=N: the reports go to file descriptor N as lines "STAGE\tDONE\tTOTAL" instead
// of the terminal (the Python module shows them in a notebook); -1 when unset or once N is closed.
int progress_fd = [] {
  const char* fd = std::getenv("CHAKRA_PROGRESS_FD");
  return fd && *fd ? std::atoi(fd) : -1;
}();
}  // namespace

TerminalProgress::TerminalProgress()
    : tty_(::isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()), last_(start_) {}

TerminalProgress::~TerminalProgress() { clear(); }

bool TerminalProgress::report(std::string_view stage, uint64_t done, uint64_t total) {
  if (interrupted()) return false;
  if (!tty_ && progress_fd < 0) return true;
  auto now = std::chrono::steady_clock::now();
  // Quiet for quick work; then at most ten updates a second.
  if (now - start_ < std::chrono::milliseconds(500) || now - last_ < std::chrono::milliseconds(100)) return true;
  last_ = now;
  if (progress_fd >= 0) {
    const std::string record = std::string(stage) + "\t" + std::to_string(done) + "\t" + std::to_string(total) + "\n";
    if (::write(progress_fd, record.data(), record.size()) < 0) progress_fd = -1;  // the reader went away
    return true;
  }
  std::string line = "\r" + std::string(stage);
  if (total) {
    char pct[16];
    std::snprintf(pct, sizeof pct, " %3d%%",
                  static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)));
    line += pct;
  } else {
    line += " " + std::to_string(done);
  }
  line += "  (Ctrl-C to stop)\x1b[K";
  std::fputs(line.c_str(), stderr);
  shown_ = true;
  return true;
}

void TerminalProgress::clear() {
  if (shown_) std::fputs("\r\x1b[K", stderr);
  shown_ = false;
}

void add_read_options(Args& args) {
  args.option("--metadata", "MODE", "whether record 0 is a GlobalMetadata: auto (detect), present, absent", "auto");
  // Limits for untrusted inputs; the defaults let every real trace through.
  args.option("--max-nodes", "N", "refuse a trace with more than N nodes (0: no limit)", "0");
  args.option("--max-record-bytes", "N", "refuse a record (node) longer than N bytes",
              std::to_string(uint64_t{1} << 30));
  args.option("--max-input-bytes", "N", "refuse an input larger than N bytes once decompressed (0: no limit)", "0");
  args.option("--max-gzip-ratio", "R",
              "refuse gzip input that inflates more than R times (beyond its first 4 MiB): a zip bomb", "1000");
}

chakra::ReadOptions read_options(const Args& args, chakra::Progress* progress) {
  chakra::ReadOptions o;
  const std::string& mode = args.get("--metadata");
  if (mode == "auto")
    o.metadata = chakra::MetadataMode::Auto;
  else if (mode == "present")
    o.metadata = chakra::MetadataMode::Present;
  else if (mode == "absent")
    o.metadata = chakra::MetadataMode::Absent;
  else
    args.fail("--metadata must be auto, present or absent, not '" + mode + "'");
  o.max_nodes = args.get_uint("--max-nodes");
  o.max_record_bytes = args.get_uint("--max-record-bytes");
  if (o.max_record_bytes == 0) args.fail("--max-record-bytes must be at least 1");
  o.input.max_bytes = args.get_uint("--max-input-bytes");
  o.input.max_gzip_ratio = args.get_positive_double("--max-gzip-ratio");
  o.progress = progress;
  return o;
}

void run_jobs(size_t n, const std::function<void(size_t)>& job, std::string_view progress_stage, size_t threads) {
  std::vector<std::string> errors(n);
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  TerminalProgress progress;
  auto worker = [&](bool reports) {
    for (size_t i; !failed && (i = next++) < n;) {
      try {
        if (interrupted()) throw chakra::Cancelled();
        job(i);
      } catch (const chakra::Error& e) {
        errors[i] = e.what();
        failed = true;
      }
      ++done;
      if (reports && !progress_stage.empty()) progress.report(progress_stage, done, n);
    }
  };
  threads = std::min<size_t>(n, threads ? threads : std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t k = 1; k < threads; ++k) pool.emplace_back(worker, false);
  worker(true);
  for (auto& t : pool) t.join();
  progress.clear();
  if (interrupted()) throw chakra::Cancelled();
  for (const std::string& e : errors)
    if (!e.empty()) throw chakra::Error(e);
}

void create_output_folder(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::path parent = std::filesystem::path(path).parent_path();
      !parent.empty() && !std::filesystem::create_directories(parent, ec) && ec)
    throw chakra::Error(parent.string() + ": cannot create the output folder: " + ec.message());
}

void check_output_path(const std::string& path, const std::string& option, bool folder_made) {
  namespace fs = std::filesystem;
  if (path == "-") return;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw chakra::Error(option + " " + path + ": is a folder; give a file's path");
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  while (folder_made && !fs::exists(folder, ec)) {  // the nearest existing folder: the rest is made in it
    const fs::path up = folder.parent_path().empty() ? fs::path(".") : folder.parent_path();
    if (up == folder) break;
    folder = up;
  }
  if (!fs::is_directory(folder, ec))
    throw chakra::Error(
        option + " " + path + ": " +
        (fs::exists(folder, ec) ? folder.string() + " is not a folder" : "no folder " + folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw chakra::Error(option + " " + path + ": cannot write in " + folder.string() + ": " + std::strerror(errno));
}

void write_rank_traces(const std::string& prefix, size_t count,
                       const std::function<void(size_t, chakra::Trace&)>& build, const std::string& groups_path,
                       const std::map<std::string, std::vector<int64_t>>& groups) {
  create_output_folder(prefix);
  std::vector<std::unique_ptr<chakra::OutputFile>> files(count);
  run_jobs(
      count,
      [&](size_t i) {
        thread_local chakra::Trace trace;
        build(i, trace);
        files[i] = std::make_unique<chakra::OutputFile>(prefix + "." + std::to_string(i) + ".et");
        chakra::write_et(trace, *files[i]);
        files[i]->finish();
      },
      "writing traces");
  std::optional<chakra::OutputFile> groups_file;
  if (!groups_path.empty())
    groups_file.emplace(groups_path), groups_file->write(chakra::astra::format_comm_groups(groups));
  for (auto& f : files) f->commit();
  if (groups_file) groups_file->commit();
}

int run_guarded(const std::string& prog, int (*body)(const Args&), const Args& args) {
  try {
    return body(args);
  } catch (const chakra::Cancelled&) {
    std::cerr << "\n" << prog << ": interrupted; no output was written\n";
    return kInterrupted;
  } catch (const chakra::Error& e) {
    // Messages quote input files, which may hold terminal escape sequences.
    std::cerr << prog << ": error: " << chakra::printable(e.what()) << "\n";
    return kFailed;
  } catch (const std::bad_alloc&) {
    std::cerr << prog << ": error: out of memory\n";
    return kFailed;
  } catch (const std::filesystem::filesystem_error& e) {  // e.g. creating an output folder; names the path
    std::cerr << prog << ": error: " << e.what() << "\n";
    return kFailed;
  }
}

void EtFileSet::add(const std::string& path, const chakra::Trace& trace) {
  files_.push_back(std::make_unique<chakra::OutputFile>(path));
  chakra::write_et(trace, *files_.back());
  files_.back()->finish();
  if (interrupted()) throw chakra::Cancelled();
}

void EtFileSet::commit() {
  for (auto& f : files_) f->commit();
}

std::string read_head(const std::string& path, size_t bytes) {
  auto in = chakra::open_input(path);
  std::string head(bytes, '\0');
  size_t n = 0;
  while (n < head.size()) {
    const size_t got = in->read(reinterpret_cast<uint8_t*>(head.data()) + n, head.size() - n);
    if (!got) break;
    n += got;
  }
  head.resize(n);
  return head;
}

chakra::InputDescription describe_file(const std::string& path) {
  const std::string head = read_head(path);
  return chakra::describe_input(path, std::span(reinterpret_cast<const uint8_t*>(head.data()), head.size()));
}

void require_chakra_et(const std::string& path, const std::string& reads) {
  const chakra::InputDescription d = describe_file(path);
  if (d.kind == chakra::InputKind::ChakraEt || d.opaque) return;
  throw chakra::Error(path + ": " + d.what + ", not a Chakra .et trace (" + reads + ")");
}

std::vector<std::string> files_under(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      out.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      std::vector<std::string> inside;
      for (const auto& e : fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') inside.push_back(e.path().string());
      std::sort(inside.begin(), inside.end());
      out.insert(out.end(), inside.begin(), inside.end());
    } else {
      throw chakra::Error(p + ": no such file or folder");
    }
  }
  return out;
}

std::vector<std::string> trace_files(const std::vector<std::string>& paths,
                                     const std::optional<chakra::sweep::Shard>& shard, bool json_too) {
  namespace fs = std::filesystem;
  auto ends_with = [](const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::pair<uint64_t, std::string>> inside;  // (rank, or past every rank; path)
    for (const auto& e : fs::directory_iterator(p, fs::directory_options::skip_permission_denied, ec)) {
      const std::string name = e.path().filename().string();
      const bool json = json_too && (ends_with(name, ".json") || ends_with(name, ".json.gz")) &&
                        name.find("comm_group") == std::string::npos;
      if (!e.is_regular_file() || name[0] == '.' || !(ends_with(name, ".et") || ends_with(name, ".et.gz") || json))
        continue;
      const std::optional<uint32_t> rank = chakra::rank_from_file_name(name);
      inside.emplace_back(rank ? *rank : uint64_t{1} << 32, e.path().string());
    }
    if (ec) throw chakra::Error(p + ": cannot list the folder: " + ec.message());
    if (inside.empty())
      throw chakra::Error(p + ": no .et traces in the folder" + (json_too ? " (nor .json ones)" : ""));
    std::sort(inside.begin(), inside.end());
    for (auto& [rank, path] : inside) out.push_back(std::move(path));
  }
  if (shard) {
    std::vector<std::string> mine;
    for (std::string& f : out) {
      const std::optional<uint32_t> rank = chakra::rank_from_file_name(fs::path(f).filename().string());
      if (!rank) throw chakra::Error(f + ": --shard splits by rank, and the file's name holds none (PREFIX.<rank>.et)");
      if (shard->has(*rank)) mine.push_back(std::move(f));
    }
    out = std::move(mine);
  }
  return out;
}

JoinedShards join_shard_outputs(const std::vector<std::string>& parts, std::string_view text_separator,
                                const std::function<std::string(std::string_view first_line)>& path_of_first_line,
                                const std::function<bool(std::string_view record, bool json)>& failed) {
  struct Record {
    uint32_t rank;
    std::string text;
  };
  std::vector<Record> records;
  std::map<uint32_t, std::string> seen;  // rank → the part that has it
  std::optional<bool> json;
  for (const std::string& part : parts) {
    const std::string text = chakra::read_file(part, {});
    if (text.empty()) continue;  // a shard with no ranks prints nothing in text mode
    const bool is_json = text[0] == '[';
    if (json && *json != is_json)
      throw chakra::Error(part + ": JSON and text parts cannot be joined (run every shard with the same options)");
    json = is_json;
    if (text.back() != '\n') throw chakra::Error(part + ": its output is cut short (no final newline)");
    // Lines; a record starts at "  {" (JSON) or at a line that does not start with a space.
    std::vector<std::string_view> lines;
    for (size_t at = 0; at < text.size();) {
      const size_t end = text.find('\n', at);
      lines.emplace_back(std::string_view(text).substr(at, end - at));
      at = end + 1;
    }
    if (is_json) {
      if (lines.front() == "[]" && lines.size() == 1) continue;
      if (lines.front() != "[" || lines.back() != "]")
        throw chakra::Error(part + ": not the JSON array the command prints with --json");
      lines = std::vector<std::string_view>(lines.begin() + 1, lines.end() - 1);
    }
    auto starts_record = [&](std::string_view line) {
      return is_json ? line == "  {" : !line.empty() && line[0] != ' ';
    };
    for (size_t i = 0; i < lines.size();) {
      if (lines[i].empty() && !is_json) {
        ++i;
        continue;
      }
      if (!starts_record(lines[i]))
        throw chakra::Error(part + ": line " + std::to_string(i + 1 + is_json) + " is not where a record starts");
      std::string record(lines[i]);
      size_t j = i + 1;
      for (; j < lines.size() && !starts_record(lines[j]) && !(lines[j].empty() && !is_json); ++j)
        record += "\n" + std::string(lines[j]);
      std::string file;
      if (is_json) {
        if (record.size() >= 2 && record.compare(record.size() - 2, 2, "},") == 0) record.pop_back();
        try {
          file = nlohmann::json::parse(record).at("file").get<std::string>();
        } catch (const std::exception&) {
          throw chakra::Error(part + ": a record at line " + std::to_string(i + 2) +
                              " is not an object with a \"file\"");
        }
      } else {
        file = path_of_first_line(lines[i]);
      }
      const std::optional<uint32_t> rank = chakra::rank_from_file_name(std::filesystem::path(file).filename().string());
      if (!rank) throw chakra::Error(part + ": " + file + " holds no rank in its name, so it was not sharded");
      if (seen.count(*rank))
        throw chakra::Error(part + ": rank " + std::to_string(*rank) + " is also in " + seen[*rank]);
      seen[*rank] = part;
      records.push_back({*rank, std::move(record)});
      i = j;
    }
  }
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.rank < b.rank; });
  JoinedShards out;
  if (json.value_or(false)) {
    out.output = records.empty() ? "[]\n" : "[\n";
    for (size_t i = 0; i < records.size(); ++i) out.output += records[i].text + (i + 1 < records.size() ? ",\n" : "\n");
    if (!records.empty()) out.output += "]\n";
  } else {
    for (size_t i = 0; i < records.size(); ++i)
      out.output += (i ? std::string(text_separator) : std::string()) + records[i].text + "\n";
  }
  for (const Record& r : records) out.any_failed |= failed(r.text, json.value_or(false));
  return out;
}

WhatIf parse_what_if(const Args& args, const std::string& spec) {
  const size_t eq = spec.rfind('=');
  WhatIf w;
  if (eq == std::string::npos || eq == 0)
    args.fail("--what-if must be NAME=K (ops whose name contains NAME, K times faster)");
  w.name_part = spec.substr(0, eq);
  const std::string k = spec.substr(eq + 1);
  char* end = nullptr;
  w.speedup = std::strtod(k.c_str(), &end);
  if (k.empty() || end != k.c_str() + k.size() || !(w.speedup > 0) || !std::isfinite(w.speedup))
    args.fail("--what-if " + spec + ": K must be a number > 0");
  return w;
}

void add_shard_option(Args& args) {
  args.option("--shard", "i/K", "do only the ranks r with r mod K == i (0 <= i < K), so K processes share the folder");
}

std::optional<chakra::sweep::Shard> shard_option(const Args& args) {
  if (!args.has("--shard")) return std::nullopt;
  auto s = chakra::sweep::parse_shard(args.get("--shard"));
  if (!s) args.fail("--shard must be i/K with 0 <= i < K, not '" + args.get("--shard") + "'");
  return s;
}

std::string self_path() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("chakra") : p.string();
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a command and returns its standard output (trimmed); chakra::Error with its output when it fails.
std::string run_command(const std::vector<std::string>& argv) {
  int out[2];
  if (pipe(out) != 0) throw chakra::Error("pipe: " + std::string(std::strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) throw chakra::Error("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "%s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw chakra::Error(argv[0] + " failed: " + text);
  return text;
}

RunFile sniff_run_file(const std::string& path, std::optional<uint32_t>* stated_rank) {
  const std::string head = read_head(path);
  if (head.find("\"traceEvents\"") != std::string::npos || head.find("\"schemaVersion\"") != std::string::npos) {
    chakra::kineto_file_rank(head, path);  // a trace whose name says another rank is an error
    if (stated_rank) *stated_rank = chakra::kineto_rank(head);
    return RunFile::Kineto;
  }
  if (head.find("\"schema\"") != std::string::npos || head.find("\"nodes\"") != std::string::npos) return RunFile::Host;
  return RunFile::Other;
}

std::vector<RankPair> find_rank_pairs(const std::string& dir, const std::string& output_stem) {
  namespace fs = std::filesystem;
  std::map<std::string, std::vector<std::string>> hosts, devices;  // folder → files
  std::map<std::string, uint32_t> stated;                          // Kineto trace → the rank it states
  const fs::path stem = output_stem.empty() ? fs::path() : fs::absolute(output_stem).lexically_normal();
  auto is_output = [&](const fs::path& p) {
    if (stem.empty() || p.parent_path() != stem.parent_path()) return false;
    std::string name = p.filename().string(), prefix = stem.filename().string() + ".";
    return name.rfind(prefix, 0) == 0 && chakra::rank_from_file_name(name).has_value();
  };
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string p = e.path().string();
    if (!e.is_regular_file() || !(chakra::ends_with(p, ".json") || chakra::ends_with(p, ".json.gz"))) continue;
    if (is_output(fs::absolute(e.path()).lexically_normal())) continue;
    std::optional<uint32_t> rank;
    RunFile k = sniff_run_file(p, &rank);
    std::string folder = e.path().parent_path().string();
    if (k == RunFile::Host) hosts[folder].push_back(p);
    if (k == RunFile::Kineto) devices[folder].push_back(p);
    if (rank) stated[p] = *rank;
  }
  auto stated_rank = [&](const std::string& d) -> std::optional<int64_t> {
    if (auto it = stated.find(d); it != stated.end()) return it->second;
    return std::nullopt;
  };
  std::vector<RankPair> pairs;
  std::map<int64_t, std::string> seen;
  auto add = [&](const std::string& host, const std::string& device, std::optional<int64_t> rank, const char* from) {
    if (!rank) throw chakra::Error(host + ": cannot tell the rank from the folder or file name");
    if (seen.count(*rank))
      throw chakra::Error(dir + ": two pairs for rank " + std::to_string(*rank) + ": " + seen[*rank] + " and " + host);
    seen[*rank] = host;
    pairs.push_back({host, device, *rank, from, std::nullopt});
  };
  for (auto& [folder, hs] : hosts) {
    std::vector<std::string>& ds = devices[folder];
    if (ds.empty()) continue;  // host ETs alone (e.g. outputs of an earlier link) are not pairs
    if (hs.size() == 1 && ds.size() == 1 && folder != fs::path(dir).lexically_normal().string()) {
      const char* from = "the Kineto trace's distributedInfo";
      const std::optional<uint32_t> folder_rank = chakra::rank_from_file_name(folder);
      std::optional<int64_t> rank = stated_rank(ds[0]);
      if (!rank) rank = folder_rank, from = "the folder's name";
      if (!rank) rank = chakra::rank_from_file_name(hs[0]), from = "the host ET's file name";
      add(hs[0], ds[0], rank, from);
      pairs.back().folder_rank = folder_rank;
      continue;
    }
    std::map<int64_t, std::string> device_by_rank;
    for (const std::string& d : ds) {
      std::optional<int64_t> r = stated_rank(d);
      if (!r) r = chakra::rank_from_file_name(d);
      if (r) {
        if (device_by_rank.count(*r))
          throw chakra::Error(folder + ": two Kineto traces for rank " + std::to_string(*r) + ": " +
                              device_by_rank[*r] + " and " + d);
        device_by_rank[*r] = d;
      }
    }
    for (const std::string& h : hs) {
      std::optional<int64_t> r = chakra::rank_from_file_name(h);
      if (!r || !device_by_rank.count(*r))
        throw chakra::Error(h +
                            ": no Kineto trace with the same rank number next to it (put each rank's pair in "
                            "its own folder, e.g. rank3/)");
      add(h, device_by_rank[*r], r, "the host ET's file name, matched to the Kineto trace's rank");
    }
  }
  if (pairs.empty()) throw chakra::Error(dir + ": no host ET + Kineto trace pairs found");
  std::sort(pairs.begin(), pairs.end(), [](const RankPair& a, const RankPair& b) { return a.rank < b.rank; });
  return pairs;
}

StdoutTo::StdoutTo(std::string path) : path_(std::move(path)) {
  if (!path_.empty()) previous_ = std::cout.rdbuf(kept_.rdbuf());
}

StdoutTo::~StdoutTo() {
  if (previous_) std::cout.rdbuf(previous_);
}

void StdoutTo::commit() {
  if (!previous_) return;
  std::cout.flush();
  std::cout.rdbuf(previous_);
  previous_ = nullptr;
  chakra::OutputFile out(path_);
  out.write(kept_.str());
  out.commit();
}

}  // namespace cli
