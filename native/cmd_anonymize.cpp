// chakra anonymize: copies of traces that keep what they do and not what they are
// (chakra/trace/anonymize.h says what is replaced, kept and dropped).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>

#include "chakra/format/et_io.h"
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

int run(const cli::Args& a) {
  chakra::AnonymizeOptions options;
  if (a.has("--key") && a.has("--key-file")) a.fail("give --key or --key-file, not both");
  if (a.has("--key")) options.key = a.get("--key");
  else if (a.has("--key-file")) options.key = chakra::read_file(a.get("--key-file"), {});
  else options.key = chakra::random_anonymize_key();
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

  // Inputs: traces, folders of ranks (their .et files; and their process groups), JSON traces.
  std::vector<std::string> inputs, groups_files;
  bool any_folder = false;
  for (const std::string& p : a.values("IN")) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      any_folder = true;
      for (const std::string& f : cli::trace_files({p}, std::nullopt, true)) inputs.push_back(f);
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file() && ends_with(e.path().filename().string(), "comm_group.json")) groups_files.push_back(e.path().string());
    } else {
      inputs.push_back(p);
    }
  }
  const std::string out = a.get("--output");
  const bool one_file = inputs.size() == 1 && !any_folder;
  // Output paths: OUT for one file; else OUT.<rank>.et (or .json), the rank from the input's name.
  std::vector<std::string> outputs;
  std::map<uint32_t, std::string> by_rank;
  for (const std::string& in : inputs) {
    if (one_file) {
      outputs.push_back(out);
      break;
    }
    const auto rank = chakra::rank_from_file_name(fs::path(in).filename().string());
    if (!rank) throw chakra::Error(in + ": several traces go to " + out + ".<rank>, and this name holds no rank");
    if (by_rank.count(*rank)) throw chakra::Error(in + ": rank " + std::to_string(*rank) + " again (also " + by_rank[*rank] + ")");
    by_rank[*rank] = in;
    outputs.push_back(out + "." + std::to_string(*rank) + (is_json(in) ? ".json" : ".et"));
  }
  if (groups_files.size() > 1) throw chakra::Error(groups_files[1] + ": a second process-group file (also " + groups_files[0] + ")");
  cli::create_output_folder(out);

  std::vector<std::unique_ptr<chakra::OutputFile>> files(inputs.size());
  std::vector<chakra::AnonymizeReport> reports(inputs.size());
  cli::run_jobs(inputs.size(), [&](size_t i) {
    files[i] = std::make_unique<chakra::OutputFile>(outputs[i]);
    if (is_json(inputs[i])) {
      auto in = chakra::open_input(inputs[i], cli::read_options(a, nullptr).input);
      chakra::anonymize_pytorch_json(anonymizer, std::move(in), *files[i], reports[i]);
    } else {
      const chakra::Trace trace = chakra::read_et(inputs[i], cli::read_options(a, nullptr));
      chakra::Trace anonymous;
      anonymizer.anonymize(trace, anonymous, reports[i]);
      chakra::write_et(anonymous, *files[i]);
    }
    files[i]->finish();
  }, "anonymizing");
  if (cli::interrupted()) throw chakra::Cancelled();
  // Process groups are numbers only: copied as they are.
  std::optional<chakra::OutputFile> groups;
  if (!groups_files.empty()) groups.emplace(out + ".comm_group.json"), groups->write(chakra::read_file(groups_files[0], {}));
  chakra::AnonymizeReport total;
  for (const auto& r : reports) total.merge(r);
  if (a.has("--report")) {
    nlohmann::ordered_json j;
    j["files"] = inputs.size();
    j["nodes"] = total.nodes;
    j["events"] = total.events;
    j["replaced"] = {{"names", total.names}, {"io_strings", total.io_literals},
                     {"metadata_strings", total.metadata_strings}};
    for (const auto& [name, n] : total.attributes)
      if (n) j["replaced"]["attributes"][name] = n;
    j["kept"] = {{"names_by_keep_names", total.names_kept}, {"names_tools_read", total.names_vocabulary},
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
    std::cerr << "chakra anonymize: " << inputs.size() << " trace" << (inputs.size() == 1 ? "" : "s") << " -> "
              << (one_file ? out : out + ".<rank>" + (groups ? ", " + out + ".comm_group.json" : std::string())) << "\n"
              << total.text();
    if (!a.has("--key") && !a.has("--key-file"))
      std::cerr << "key: random and not written anywhere (give --key to get the same tokens in another run)\n";
  }
  return cli::kOk;
}

}  // namespace

int cmd_anonymize(int argc, char** argv) {
  cli::Args args("chakra anonymize",
                 "Copies of traces to share without sharing what the model is: node names, op schemas, string\n"
                 "attributes, strings in inputs/outputs and metadata become keyed tokens (the same string gives the\n"
                 "same token on every rank under one key); ids, types, dependencies, times, sizes, communication and\n"
                 "numeric process groups are kept, so analyses and simulations give the same numbers.\n"
                 "IN: .et traces, folders of ranks, or PyTorch host / linked JSON traces.");
  args.option("--output", "OUT", "the copy (one input file), or OUT.<rank>.et for several or a folder", "", true);
  args.alias("-o", "--output");
  args.option("--key", "K", "the secret the tokens derive from (default: random, not written anywhere)");
  args.option("--key-file", "FILE", "read the secret from FILE (keeps it off the command line)");
  args.option("--keep-names", "REGEX", "keep node names matching REGEX (ECMAScript), e.g. '^(nccl|aten::)'");
  args.flag("--bucket-shapes", "round every tensor dimension up to a power of two");
  args.option("--report", "FILE", "write what was replaced, kept and dropped as JSON");
  args.flag("--quiet", "no summary");
  cli::add_read_options(args);
  args.positional("IN", "a trace or a folder of ranks", true, true);
  args.parse(argc, argv);
  return cli::run_guarded("chakra anonymize", run, args);
}
