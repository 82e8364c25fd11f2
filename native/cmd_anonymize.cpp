// chakra anonymize: copies of traces that keep what they do and not what they are
// (chakra/trace/anonymize.h says what is replaced, kept and dropped; chakra/pytorch/anonymize_json.h
// how PyTorch's host ETs and Kineto traces keep their structure).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>

#include "chakra/app/workspace.h"
#include "chakra/format/et_io.h"
#include "chakra/format/et_json.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/anonymize_json.h"
#include "chakra/support/error.h"
#include "chakra/trace/anonymize.h"
#include "cli.h"
#include "commands.h"

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool is_json(const std::string& path) { return ends_with(path, ".json") || ends_with(path, ".json.gz"); }

// How a file given to anonymize is read, from its first bytes.
enum class Format { Et, ChakraJson, PytorchJson };
Format format_of(const std::string& path) {
  using chakra::InputKind;
  const chakra::InputDescription d = cli::describe_file(path);
  if (d.kind == InputKind::ChakraEt || d.opaque) return Format::Et;  // the .et reader says what is wrong
  if (d.kind == InputKind::ChakraJson) return Format::ChakraJson;
  if (d.kind == InputKind::PytorchHostEt || d.kind == InputKind::KinetoTrace) return Format::PytorchJson;
  throw chakra::Error(path + ": " + d.what +
                      ", not a trace chakra anonymize reads (Chakra .et or JSON, PyTorch host ET, Kineto trace)");
}

// One input anonymized into `out` (not committed).
void anonymize_file(const chakra::Anonymizer& anonymizer, const cli::Args& a, const std::string& in, Format format,
                    chakra::OutputFile& out, chakra::AnonymizeReport& report) {
  const chakra::ReadOptions read = cli::read_options(a, nullptr);
  chakra::Trace anonymous;
  switch (format) {
    case Format::Et:
      anonymizer.anonymize(chakra::read_et(in, read), anonymous, report);
      chakra::write_et(anonymous, out);
      break;
    case Format::ChakraJson:
      anonymizer.anonymize(chakra::read_json_trace_file(in, read.input), anonymous, report);
      chakra::write_json(anonymous, out);
      break;
    case Format::PytorchJson:
      chakra::anonymize_pytorch_json(anonymizer, chakra::open_input(in, read.input), out, report);
      break;
  }
  out.finish();
}

// A folder holding a PyTorch run as recorded: host ETs and Kineto traces, in it or below.
bool is_pytorch_run(const std::string& dir) {
  bool host = false, kineto = false;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
    const std::string p = e.path().string();
    if (!e.is_regular_file() || !is_json(p)) continue;
    const cli::RunFile k = cli::sniff_run_file(p);
    host |= k == cli::RunFile::Host;
    kineto |= k == cli::RunFile::Kineto;
    if (host && kineto) return true;
  }
  return false;
}

// One input's copy, to be written.
struct Copy {
  std::string in, out;
  Format format = Format::Et;
};

// A PyTorch run folder's pairs, and the files under it in no pair (not copied).
struct RunFolder {
  std::string out;
  std::vector<cli::RankPair> pairs;
  std::vector<std::string> left_out;
};

// A run folder's copy: the same layout (a folder per rank, or pairs side by side), files named
// by what they are and the rank (the originals' names often name the model).
std::vector<Copy> run_folder_copies(const std::string& dir, RunFolder& run) {
  auto resolved = [](const std::string& p) {  // without a trailing separator's empty last part
    const fs::path r = fs::weakly_canonical(p);
    return r.has_filename() ? r : r.parent_path();
  };
  const fs::path from = resolved(dir), to = resolved(run.out);
  if (std::mismatch(from.begin(), from.end(), to.begin(), to.end()).first == from.end())
    throw chakra::Error(run.out + ": inside the run folder " + dir +
                        " (its copies would be read as ranks of the run); "
                        "write the copy elsewhere");
  run.pairs = cli::find_rank_pairs(dir, "");
  const fs::path top = fs::path(dir).lexically_normal();
  bool per_rank_folders = false;
  std::set<std::string> paired;
  for (const cli::RankPair& p : run.pairs) {
    per_rank_folders |= fs::path(p.host).parent_path().lexically_normal() != top;
    paired.insert(p.host), paired.insert(p.device);
  }
  std::vector<Copy> copies;
  for (const cli::RankPair& p : run.pairs) {
    const std::string rank = std::to_string(p.rank);
    const std::pair<std::string, std::string> files[] = {{p.host, "host_et"}, {p.device, "kineto"}};
    for (const auto& [in, what] : files) {
      const std::string suffix = ends_with(in, ".gz") ? ".json.gz" : ".json";
      // The rank in every name, as the pairing checks compare it (chakra link).
      const std::string name = (per_rank_folders ? "rank" + rank + "/" : "") + what + "." + rank + suffix;
      copies.push_back({in, run.out + "/" + name, format_of(in)});
    }
  }
  for (const std::string& f : cli::files_under({dir}))
    if (!paired.count(f)) run.left_out.push_back(f);
  return copies;
}

// What a run folder's copy holds: each rank's pair, the evidence of its rank, where it went.
void print_run(const RunFolder& run, const std::vector<Copy>& copies) {
  const size_t n = run.pairs.size();
  std::cerr << "chakra anonymize: a PyTorch run, " << n << " rank" << (n == 1 ? "" : "s")
            << " (host ET + Kineto trace each) -> " << run.out << "\n";
  for (size_t i = 0; i < n; ++i)
    std::cerr << "  rank " << run.pairs[i].rank << " (" << run.pairs[i].rank_from << "): " << run.pairs[i].host << " + "
              << run.pairs[i].device << " -> " << copies[2 * i].out << " + " << copies[2 * i + 1].out << "\n";
  if (run.left_out.empty()) return;
  const size_t left = run.left_out.size();
  std::cerr << "not copied (no rank's host ET + Kineto pair): " << left << " file" << (left == 1 ? "" : "s");
  for (size_t i = 0; i < left && i < 5; ++i) std::cerr << (i ? ", " : ": ") << run.left_out[i];
  std::cerr << (left > 5 ? ", ..." : "") << "\n";
}

int run(const cli::Args& a) {
  chakra::AnonymizeOptions options;
  if (a.has("--key") && a.has("--key-file")) a.fail("give --key or --key-file, not both");
  if (a.has("--key"))
    options.key = a.get("--key");
  else if (a.has("--key-file"))
    options.key = chakra::read_file(a.get("--key-file"), {});
  else
    options.key = chakra::random_anonymize_key();
  if (options.key.empty()) a.fail("the key is empty");
  if (a.has("--keep-names")) {
    std::shared_ptr<const std::regex> keep;
    try {
      keep = std::make_shared<const std::regex>(a.get("--keep-names"), std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      a.fail("--keep-names: not a regular expression: " + std::string(e.what()));
    }
    options.keep_name = [keep](std::string_view name) { return std::regex_search(name.begin(), name.end(), *keep); };
  }
  options.bucket_shapes = a.has("--bucket-shapes");
  const chakra::Anonymizer anonymizer(options);
  const std::string out = a.get("--output");
  const std::vector<std::string>& given = a.values("IN");

  std::vector<Copy> copies;
  RunFolder run_folder;
  std::vector<std::string> groups_files;
  bool any_folder = false;
  std::error_code ec;
  if (fs::is_directory(given[0], ec) && is_pytorch_run(given[0])) {
    // A PyTorch run as recorded: OUT is a folder of the same layout.
    if (given.size() > 1) a.fail("a PyTorch run folder is anonymized on its own: give it alone");
    run_folder.out = out;
    while (run_folder.out.size() > 1 && run_folder.out.back() == '/') run_folder.out.pop_back();
    copies = run_folder_copies(given[0], run_folder);
  } else {
    // Traces, folders of ranks (their .et and .json traces; and their process groups), JSON traces.
    std::vector<std::string> inputs;
    for (const std::string& p : given) {
      if (fs::is_directory(p, ec)) {
        if (is_pytorch_run(p)) a.fail(p + ": a PyTorch run folder is anonymized on its own: give it alone");
        any_folder = true;
        for (const std::string& f : cli::trace_files({p}, std::nullopt, true)) inputs.push_back(f);
        for (const auto& e : fs::directory_iterator(p))
          if (e.is_regular_file() && ends_with(e.path().filename().string(), "comm_group.json"))
            groups_files.push_back(e.path().string());
      } else {
        inputs.push_back(p);
      }
    }
    const bool one_file = inputs.size() == 1 && !any_folder;
    // Output paths: OUT for one file; else OUT.<rank>.et (or .json), the rank from the input's name.
    std::map<uint32_t, std::string> by_rank;
    for (const std::string& in : inputs) {
      const Format format = format_of(in);  // first: a file that is no trace is refused for that
      if (one_file) {
        copies.push_back({in, out, format});
        break;
      }
      const auto rank = chakra::rank_from_file_name(fs::path(in).filename().string());
      if (!rank) throw chakra::Error(in + ": several traces go to " + out + ".<rank>, and this name holds no rank");
      if (by_rank.count(*rank))
        throw chakra::Error(in + ": rank " + std::to_string(*rank) + " again (also " + by_rank[*rank] + ")");
      by_rank[*rank] = in;
      copies.push_back({in, out + "." + std::to_string(*rank) + (is_json(in) ? ".json" : ".et"), format});
    }
    if (groups_files.size() > 1)
      throw chakra::Error(groups_files[1] + ": a second process-group file (also " + groups_files[0] + ")");
  }
  for (const Copy& c : copies) cli::create_output_folder(c.out);

  std::vector<std::unique_ptr<chakra::OutputFile>> files(copies.size());
  std::vector<chakra::AnonymizeReport> reports(copies.size());
  cli::run_jobs(
      copies.size(),
      [&](size_t i) {
        files[i] = std::make_unique<chakra::OutputFile>(copies[i].out);
        anonymize_file(anonymizer, a, copies[i].in, copies[i].format, *files[i], reports[i]);
      },
      "anonymizing");
  if (cli::interrupted()) throw chakra::Cancelled();
  // Process groups are numbers only: copied as they are.
  std::optional<chakra::OutputFile> groups;
  if (!groups_files.empty())
    groups.emplace(out + ".comm_group.json"), groups->write(chakra::read_file(groups_files[0], {}));
  chakra::AnonymizeReport total;
  for (const auto& r : reports) total.merge(r);
  if (a.has("--report")) {
    nlohmann::ordered_json j;
    j["files"] = copies.size();
    if (!run_folder.pairs.empty()) j["ranks"] = run_folder.pairs.size(), j["not_copied"] = run_folder.left_out;
    j["nodes"] = total.nodes;
    j["events"] = total.events;
    j["replaced"] = {
        {"names", total.names}, {"io_strings", total.io_literals}, {"metadata_strings", total.metadata_strings}};
    for (const auto& [name, n] : total.attributes)
      if (n) j["replaced"]["attributes"][name] = n;
    j["kept"] = {{"names_by_keep_names", total.names_kept},
                 {"names_tools_read", total.names_vocabulary},
                 {"shapes_bucketed", total.shapes_bucketed}};
    j["dropped"] = {{"attribute_docs", total.docs_dropped}, {"unknown_fields", total.unknown_fields_dropped}};
    j["key"] = a.has("--key") || a.has("--key-file") ? "given" : "random, not written anywhere";
    chakra::OutputFile report(a.get("--report"));
    report.write(j.dump(2) + "\n");
    report.commit();
  }
  for (auto& f : files) f->commit();
  if (groups) groups->commit();
  if (!a.has("--quiet")) {
    if (!run_folder.pairs.empty()) {
      print_run(run_folder, copies);
    } else {
      const bool one_file = copies.size() == 1 && copies[0].out == out;
      std::cerr << "chakra anonymize: " << copies.size() << " trace" << (copies.size() == 1 ? "" : "s") << " -> "
                << (one_file ? out : out + ".<rank>" + (groups ? ", " + out + ".comm_group.json" : std::string()))
                << "\n";
    }
    std::cerr << total.text();
    if (!a.has("--key") && !a.has("--key-file"))
      std::cerr << "key: random and not written anywhere (give --key to get the same tokens in another run)\n";
  }
  return cli::kOk;
}

}  // namespace

int cmd_anonymize(int argc, char** argv) {
  cli::Args args(
      "chakra anonymize",
      "Copies of traces to share without sharing what the model is: node and event names, op schemas,\n"
      "string attributes and args, strings in inputs/outputs and metadata become keyed tokens (the same\n"
      "string gives the same token on every rank and in every file under one key); ids, types,\n"
      "dependencies, times, sizes, communication, numeric process groups and the names the tools read\n"
      "(NCCL kernels, memory copies, CUDA/HIP calls, ProfilerStep#N) are kept, so linking, conversion,\n"
      "analyses and simulations give the same numbers.\n"
      "IN: .et traces, folders of ranks, Chakra JSON, PyTorch host / linked JSON or Kineto traces, or a\n"
      "PyTorch run folder (each rank's host ET + Kineto trace, as chakra link DIR takes): its copy is a\n"
      "folder OUT of the same layout, OUT/rank<r>/{host_et,kineto}.<r>.json or OUT/{host_et,kineto}.<r>.json.");
  args.option("--output", "OUT", "the copy (one input file), OUT.<rank>.et (several, a folder), OUT/ (a run folder)",
              "", true);
  args.alias("-o", "--output");
  args.option("--key", "K", "the secret the tokens derive from (default: random, not written anywhere)");
  args.option("--key-file", "FILE", "read the secret from FILE (keeps it off the command line)");
  args.option("--keep-names", "REGEX", "keep names matching REGEX (ECMAScript) as well, e.g. '^aten::'");
  args.flag("--bucket-shapes", "round every tensor dimension up to a power of two");
  args.option("--report", "FILE", "write what was replaced, kept and dropped as JSON");
  args.flag("--quiet", "no summary");
  cli::add_read_options(args);
  args.positional("IN", "a trace, a folder of ranks or a PyTorch run folder", true, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra anonymize", run, args);
}

CHAKRA_COMMAND(100, "anonymize", cmd_anonymize,
               "copies of traces with names, schemas and strings replaced by keyed tokens, to share");
