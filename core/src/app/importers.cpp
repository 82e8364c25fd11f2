#include "chakra/app/importers.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <vector>

#include "chakra/format/et_json.h"
#include "chakra/format/io.h"
#include "chakra/support/error.h"
#include "importer_parts.h"
#include <nlohmann/json.hpp>

namespace chakra {

namespace {

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

bool json_object(std::string_view head) {
  const size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && head[first] == '{';
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A well-known format other than ours, from its magic bytes ("a PNG image"), or null.
const char* other_format(std::string_view head) {
  static const std::pair<std::string_view, const char*> kMagic[] = {{"\x89PNG", "a PNG image"},
                                                                    {"\xFF\xD8\xFF", "a JPEG image"},
                                                                    {"GIF8", "a GIF image"},
                                                                    {"%PDF", "a PDF document"},
                                                                    {"PK\x03\x04", "a ZIP archive"},
                                                                    {"\x7F"
                                                                     "ELF",
                                                                     "an executable (ELF)"},
                                                                    {"BZh", "bzip2-compressed data"},
                                                                    {"\xFD"
                                                                     "7zXZ",
                                                                     "xz-compressed data"},
                                                                    {"\x28\xB5\x2F\xFD", "zstd-compressed data"},
                                                                    {"SQLite format 3", "an SQLite database"}};
  for (const auto& [magic, what] : kMagic)
    if (head.substr(0, magic.size()) == magic) return what;
  if (head.size() > 262 && head.substr(257, 5) == "ustar") return "a tar archive";
  return nullptr;
}

// Binary content: control bytes no text file has, in its first 512 bytes.
bool binary(std::string_view head) {
  return !std::all_of(head.begin(), head.begin() + std::min<size_t>(head.size(), 512), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b >= 32 || b == '\n' || b == '\r' || b == '\t';
  });
}

// What a file of no kind we read looks like, from its magic bytes or its first characters.
std::string looks_like(std::string_view head) {
  if (const char* format = other_format(head)) return format;
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "an empty file";
  if (head[first] == '{' || head[first] == '[') return "JSON of no kind chakrakit reads";
  return binary(head) ? "binary data of no kind chakrakit reads" : "text of no kind chakrakit reads";
}

}  // namespace

// ---- the sniffers, one per kind

namespace importer_functions {

std::string sniff_kineto(std::string_view, std::string_view head) {
  return json_object(head) && contains(head, "\"traceEvents\"") ? "traceEvents" : "";
}

// Asked before host ETs, which also hold "nodes".
std::string sniff_chakra_json(std::string_view, std::string_view head) {
  if (!looks_like_chakra_json(head)) return "";
  return contains(head, "\"globalMetadata\"") ? "globalMetadata" : "nodes of Chakra node types";
}

std::string sniff_pytorch_host(std::string_view, std::string_view head) {
  if (!json_object(head) || !contains(head, "\"nodes\"")) return "";
  if (contains(head, "\"schema\"")) return "nodes, schema";
  return contains(head, "\"pid\"") ? "nodes, pid" : "";
}

// The keys that make a JSON object an ASTRA-sim system config: scheduling-policy,
// preferred-dataset-splits and the <collective>-implementation lists.
std::string sniff_system_config(std::string_view, std::string_view head) {
  if (!json_object(head)) return "";
  std::vector<std::string_view> keys;
  for (size_t open = head.find('"'); open != std::string_view::npos;) {
    const size_t close = head.find('"', open + 1);
    if (close == std::string_view::npos) break;
    const std::string_view key = head.substr(open + 1, close - open - 1);
    const size_t next = head.find_first_not_of(" \t\r\n", close + 1);
    if (next != std::string_view::npos && head[next] == ':' &&
        (key == "scheduling-policy" || key == "preferred-dataset-splits" || key.ends_with("-implementation")))
      keys.push_back(key);
    open = head.find('"', close + 1);
  }
  std::string listed;
  for (size_t i = 0; i < keys.size() && i < 3; ++i) listed += (i ? ", " : "") + std::string(keys[i]);
  return listed + (keys.size() > 3 ? ", ..." : "");
}

std::string sniff_remote_memory(std::string_view, std::string_view head) {
  return json_object(head) && contains(head, "\"memory-type\"") ? "memory-type" : "";
}

// ASTRA-sim's communicator-group JSON: {"<group id>": [ranks...], ...}. Such files are small, so
// the whole text is in `head` when it is one.
std::string sniff_comm_groups(std::string_view, std::string_view head) {
  if (!json_object(head)) return "";
  const nlohmann::json j = nlohmann::json::parse(head, nullptr, false);
  if (!j.is_object() || j.empty()) return "";
  for (const auto& [key, value] : j.items()) {
    if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos || !value.is_array()) return "";
    for (const auto& r : value)
      if (!r.is_number_integer()) return "";
  }
  return "rank lists under group ids";
}

// A table chakra sweep wrote: JSON lines whose first row starts with its point and sweep columns.
std::string sniff_sweep_table(std::string_view, std::string_view head) {
  if (!json_object(head)) return "";
  const std::string_view first_line = head.substr(0, head.find('\n'));
  return contains(first_line, "\"point\"") && contains(first_line, "\"sweep\"") ? "rows of point, sweep" : "";
}

// A result chakra suite run wrote (its suite's hash and entries), or a board of them.
std::string sniff_suite_result(std::string_view, std::string_view head) {
  if (!json_object(head)) return "";
  if (contains(head, "\"suite_board\"")) return "suite_board";
  return contains(head, "\"suite_hash\"") && contains(head, "\"entries\"") ? "suite_hash, entries" : "";
}

std::string sniff_network_yaml(std::string_view, std::string_view head) {
  return !json_object(head) && contains(head, "topology") && contains(head, "npus_count") ? "topology, npus_count" : "";
}

std::string sniff_stablehlo(std::string_view name, std::string_view head) {
  if (json_object(head) || binary(head)) return "";
  if (ends_with(lower(name), ".mlir")) return "a name ending in .mlir";
  return contains(head, "stablehlo.") && (contains(head, "func.func") || contains(head, "module @")) ? "stablehlo ops"
                                                                                                     : "";
}

// Text workloads start with a parallelism type word, e.g. "DATA", "HYBRID_TRANSFORMER",
// "MICRO", followed by more tokens or a newline and a layer count.
std::string sniff_text_workload(std::string_view, std::string_view head) {
  size_t i = 0;
  while (i < head.size() && (std::isupper(static_cast<unsigned char>(head[i])) || head[i] == '_')) ++i;
  if (i < 4 || i >= head.size() || !(head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
    return "";
  size_t eol = head.find('\n');
  if (eol == std::string_view::npos) return "";
  size_t j = eol + 1;
  while (j < head.size() && (head[j] == ' ' || head[j] == '\t')) ++j;
  return j < head.size() && std::isdigit(static_cast<unsigned char>(head[j])) ? "a parallelism word, then a layer count"
                                                                              : "";
}

std::string sniff_chakra_et(std::string_view name, std::string_view head) {
  if (json_object(head)) return "";  // JSON of no kind above, whatever its name
  const std::string l = lower(name);
  for (std::string_view suffix : {".et", ".et.gz", ".eg", ".eg.gz", ".chakra", ".chakra.gz"})
    if (ends_with(l, suffix)) return "a name ending in " + std::string(suffix);
  if (other_format(head)) return "";  // an image, an archive...
  // Binary content (control bytes no text file has) starting with a plausible record length: a
  // Chakra trace under another name.
  const bool control_bytes = std::any_of(head.begin(), head.begin() + std::min<size_t>(head.size(), 256), [](char c) {
    auto b = static_cast<unsigned char>(c);
    return b < 9 || (b > 13 && b < 32);
  });
  if (control_bytes && head.size() > 1 && static_cast<unsigned char>(head[0]) > 0 && (head[1] & 7) <= 2 &&
      (head[1] >> 3) >= 1)
    return "binary records with length prefixes";
  return "";
}

}  // namespace importer_functions

namespace {

using namespace importer_functions;

// In InputKind order (importers.def's).
const FileImporter kImporters[] = {
#define CHAKRA_IMPORTER(kind, function, sniff_order, name, what) \
  {InputKind::kind, name, what, sniff_order, sniff_##function, open_##function},
#include "chakra/app/importers.def"
#undef CHAKRA_IMPORTER
};

// The same in the order they are asked.
const std::vector<FileImporter>& by_sniff_order() {
  static const std::vector<FileImporter> sorted = [] {
    std::vector<FileImporter> v(std::begin(kImporters), std::end(kImporters));
    std::stable_sort(v.begin(), v.end(),
                     [](const FileImporter& a, const FileImporter& b) { return a.sniff_order < b.sniff_order; });
    return v;
  }();
  return sorted;
}

}  // namespace

std::span<const FileImporter> importers() { return by_sniff_order(); }

const FileImporter& importer(InputKind kind) {
  if (kind == InputKind::Unknown) throw Error("no importer of this kind");
  return kImporters[static_cast<size_t>(kind)];
}

const char* input_kind_name(InputKind kind) {
  return kind == InputKind::Unknown ? "file of unknown kind" : importer(kind).name;
}

std::string importer_names() {
  std::string out;  // in InputKind's order, traces first
  for (int k = 0; k < static_cast<int>(InputKind::Unknown); ++k)
    out += (out.empty() ? "" : ", ") + std::string(importer(static_cast<InputKind>(k)).name);
  return out;
}

std::string input_head(std::span<const uint8_t> bytes, const std::string& name) {
  if (!is_gzip(bytes))
    return std::string(reinterpret_cast<const char*>(bytes.data()), std::min<size_t>(bytes.size(), 65536));
  std::string out(65536, '\0');
  size_t got = 0;
  try {
    auto in = memory_input(bytes, name);
    while (got < out.size()) {
      size_t n = in->read(reinterpret_cast<uint8_t*>(out.data()) + got, out.size() - got);
      if (n == 0) break;
      got += n;
    }
  } catch (const Error&) {}
  out.resize(got);
  return out;
}

namespace {
SniffedInput sniff_head(std::string_view name, std::string_view head) {
  for (const FileImporter& i : by_sniff_order())
    if (std::string evidence = i.sniff(name, head); !evidence.empty()) return {i.kind, std::move(evidence)};
  return {};
}
}  // namespace

SniffedInput sniff_input(std::string_view name, std::span<const uint8_t> bytes) {
  return sniff_head(name, input_head(bytes, std::string(name)));
}

InputKind detect_input_kind(std::string_view name, std::span<const uint8_t> bytes) {
  return sniff_input(name, bytes).kind;
}

InputDescription describe_input(std::string_view name, std::span<const uint8_t> bytes) {
  InputDescription d;
  const std::string head = input_head(bytes, std::string(name));  // inflated once, for the kind and the words
  SniffedInput s = sniff_head(name, head);
  d.kind = s.kind;
  d.evidence = std::move(s.evidence);
  if (d.kind != InputKind::Unknown) {
    d.what = importer(d.kind).what;
    return d;
  }
  d.what = looks_like(head);
  d.opaque = !head.empty() && binary(head) && !other_format(head);
  return d;
}

}  // namespace chakra
