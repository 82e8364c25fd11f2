#include "chakra/app/workspace.h"

#include <algorithm>
#include <chrono>
#include <cctype>

#include "chakra/app/share_link.h"
#include "chakra/format/et_json.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/error.h"
#include <nlohmann/json.hpp>

namespace chakra {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Up to 64 KiB of the content, inflated when gzip (a corrupt stream gives what could be read).
std::string head_of(std::span<const uint8_t> bytes, const std::string& name) {
  if (!is_gzip(bytes)) return std::string(reinterpret_cast<const char*>(bytes.data()), std::min<size_t>(bytes.size(), 65536));
  std::string out(65536, '\0');
  size_t got = 0;
  try {
    auto in = memory_input(bytes, name);
    while (got < out.size()) {
      size_t n = in->read(reinterpret_cast<uint8_t*>(out.data()) + got, out.size() - got);
      if (n == 0) break;
      got += n;
    }
  } catch (const Error&) {
  }
  out.resize(got);
  return out;
}

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// Text workloads start with a parallelism type word, e.g. "DATA", "HYBRID_TRANSFORMER",
// "MICRO", followed by more tokens or a newline and a layer count.
bool looks_like_text_workload(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && (std::isupper(static_cast<unsigned char>(head[i])) || head[i] == '_')) ++i;
  if (i < 4 || i >= head.size() || !(head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
    return false;
  size_t eol = head.find('\n');
  if (eol == std::string_view::npos) return false;
  size_t j = eol + 1;
  while (j < head.size() && (head[j] == ' ' || head[j] == '\t')) ++j;
  return j < head.size() && std::isdigit(static_cast<unsigned char>(head[j]));
}

// A well-known format other than ours, from its magic bytes ("a PNG image"), or null.
const char* other_format(std::string_view head) {
  static const std::pair<std::string_view, const char*> kMagic[] = {
      {"\x89PNG", "a PNG image"}, {"\xFF\xD8\xFF", "a JPEG image"}, {"GIF8", "a GIF image"},
      {"%PDF", "a PDF document"}, {"PK\x03\x04", "a ZIP archive"}, {"\x7F" "ELF", "an executable (ELF)"},
      {"BZh", "bzip2-compressed data"}, {"\xFD" "7zXZ", "xz-compressed data"}, {"\x28\xB5\x2F\xFD", "zstd-compressed data"},
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

// ASTRA-sim's communicator-group JSON: {"<group id>": [ranks...], ...}. Such files are small, so
// the whole text is in `head` when it is one.
bool is_comm_group_json(std::string_view head) {
  const nlohmann::json j = nlohmann::json::parse(head, nullptr, false);
  if (!j.is_object() || j.empty()) return false;
  for (const auto& [key, value] : j.items()) {
    if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos || !value.is_array()) return false;
    for (const auto& r : value)
      if (!r.is_number_integer()) return false;
  }
  return true;
}

// The keys of `head` (a JSON object's first bytes) that make it an ASTRA-sim system config:
// scheduling-policy, preferred-dataset-splits and the <collective>-implementation lists.
std::vector<std::string_view> system_config_keys(std::string_view head) {
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
  return keys;
}

}  // namespace

const char* input_kind_name(InputKind kind) {
  switch (kind) {
    case InputKind::ChakraEt: return "Chakra ET";
    case InputKind::PytorchHostEt: return "PyTorch host ET";
    case InputKind::KinetoTrace: return "Kineto trace";
    case InputKind::TextWorkload: return "ASTRA-sim text workload";
    case InputKind::NetworkYaml: return "ASTRA-sim network config";
    case InputKind::SystemJson: return "ASTRA-sim system config";
    case InputKind::CommGroupJson: return "communicator groups JSON";
    case InputKind::RemoteMemoryJson: return "ASTRA-sim remote-memory config";
    case InputKind::Unknown: return "file of unknown kind";
  }
  return "file of unknown kind";
}

InputDescription describe_input(std::string_view name, std::span<const uint8_t> bytes) {
  InputDescription d;
  const std::string head = head_of(bytes, std::string(name));
  d.kind = detect_input_kind(name, bytes);
  if (d.kind != InputKind::KinetoTrace && looks_like_chakra_json(head)) {
    d.kind = InputKind::Unknown;
    d.what = "a Chakra JSON trace (as chakra jsonize writes)";
    d.chakra_json = true;
    return d;
  }
  switch (d.kind) {
    case InputKind::ChakraEt: d.what = "a Chakra trace (.et)"; break;
    case InputKind::PytorchHostEt: d.what = "a PyTorch host execution trace"; break;
    case InputKind::KinetoTrace: d.what = "a Kineto (PyTorch profiler) trace"; break;
    case InputKind::TextWorkload: d.what = "an ASTRA-sim text workload"; break;
    case InputKind::NetworkYaml: d.what = "an ASTRA-sim network config (YAML)"; break;
    case InputKind::SystemJson: d.what = "an ASTRA-sim system config (JSON)"; break;
    case InputKind::CommGroupJson: d.what = "a communicator-group file (JSON)"; break;
    case InputKind::RemoteMemoryJson: d.what = "an ASTRA-sim remote-memory config (JSON)"; break;
    case InputKind::Unknown:
      d.what = looks_like(head);
      d.opaque = !head.empty() && binary(head) && !other_format(head);
      break;
  }
  return d;
}

InputKind detect_input_kind(std::string_view name, std::span<const uint8_t> bytes) {
  std::string head = head_of(bytes, std::string(name));
  size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{') {
    if (contains(head, "\"traceEvents\"")) return InputKind::KinetoTrace;
    if (contains(head, "\"nodes\"") && (contains(head, "\"schema\"") || contains(head, "\"pid\""))) return InputKind::PytorchHostEt;
    if (!system_config_keys(head).empty()) return InputKind::SystemJson;
    if (contains(head, "\"memory-type\"")) return InputKind::RemoteMemoryJson;
    if (is_comm_group_json(head)) return InputKind::CommGroupJson;
    return InputKind::Unknown;
  }
  if (contains(head, "topology") && contains(head, "npus_count")) return InputKind::NetworkYaml;
  if (looks_like_text_workload(head)) return InputKind::TextWorkload;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (std::string_view suffix : {".et", ".et.gz", ".eg", ".eg.gz", ".chakra", ".chakra.gz"})
    if (ends_with(lower, suffix)) return InputKind::ChakraEt;
  if (other_format(head)) return InputKind::Unknown;  // an image, an archive...
  // Binary content (control bytes no text file has) starting with a plausible record length: a
  // Chakra trace under another name.
  const bool control_bytes = std::any_of(head.begin(), head.begin() + std::min<size_t>(head.size(), 256), [](char c) {
    auto b = static_cast<unsigned char>(c);
    return b < 9 || (b > 13 && b < 32);
  });
  if (control_bytes && head.size() > 1 && static_cast<unsigned char>(head[0]) > 0 && (head[1] & 7) <= 2 &&
      (head[1] >> 3) >= 1)
    return InputKind::ChakraEt;
  return InputKind::Unknown;
}

std::string input_kind_evidence(std::string_view name, std::span<const uint8_t> bytes) {
  const std::string head = head_of(bytes, std::string(name));
  switch (detect_input_kind(name, bytes)) {
    case InputKind::SystemJson: {
      const std::vector<std::string_view> keys = system_config_keys(head);
      std::string listed;
      for (size_t i = 0; i < keys.size() && i < 3; ++i) listed += (i ? ", " : "") + std::string(keys[i]);
      return listed + (keys.size() > 3 ? ", ..." : "");
    }
    case InputKind::NetworkYaml: return "topology, npus_count";
    case InputKind::KinetoTrace: return "traceEvents";
    case InputKind::PytorchHostEt: return contains(head, "\"schema\"") ? "nodes, schema" : "nodes, pid";
    case InputKind::RemoteMemoryJson: return "memory-type";
    default: return "";
  }
}

Workspace::Loading::~Loading() = default;

std::string Workspace::put_converted(Loading& l) {
  ConvertedRank& c = *l.converted_;
  PytorchPair* p = pair_of(c.rank);
  if (!p) return {};  // cleared since begin_converted(): nothing of it stays
  auto t = std::make_unique<RankTrace>();
  t->rank = c.rank;
  t->source = c.source;
  t->bytes = c.bytes;
  t->load_ms = c.convert_ms + l.elapsed_ms_;
  t->trace = std::move(l.trace_);
  t->notes = std::move(c.notes);
  t->warnings = std::move(c.warnings);
  for (auto& [id, members] : c.groups)
    if (!groups.count(id)) groups[id] = std::move(members);
  if (p->generation == c.generation) p->old_host = p->old_kineto = {};
  put_rank(std::move(t));
  return c.message;
}

namespace {
// What a streamed .et may hold undecoded: the page sends more only below this.
constexpr uint64_t kHeldBytes = uint64_t{16} << 20;
}  // namespace

void Workspace::Loading::add_bytes(std::span<const uint8_t> piece) {
  pieces_->add(piece);  // throws past the file's size
  if (head_.size() < kFingerprintEnd)
    head_.insert(head_.end(), piece.begin(), piece.begin() + std::min(piece.size(), kFingerprintEnd - head_.size()));
  tail_.insert(tail_.end(), piece.end() - std::min(piece.size(), kFingerprintEnd), piece.end());
  if (tail_.size() > kFingerprintEnd) tail_.erase(tail_.begin(), tail_.end() - kFingerprintEnd);
  if (!kind_known_ && pieces_->received() >= std::min<uint64_t>(total_, kFingerprintEnd)) learn_kind();
  if (streaming_) frame_records();  // so bytes_wanted() counts what can be decoded now
  if (kind_known_ && !streaming_) {  // read whole: into one buffer as the pieces come
    pieces_->set_readable(pieces_->received());
    bytes_.reserve(static_cast<size_t>(total_));
    const size_t at = bytes_.size();
    bytes_.resize(static_cast<size_t>(pieces_->received()));
    for (size_t got = at; got < bytes_.size();) {
      const size_t n = pieces_->read(bytes_.data() + got, bytes_.size() - got);
      if (n == 0) throw Error(name_ + ": lost bytes while gathering the file");  // cannot happen: all are readable
      got += n;
    }
  }
}

void Workspace::Loading::learn_kind() {
  // The first 64 KiB are in: what kind of file this is, and whether it can be decoded as it comes.
  kind_ = detect_input_kind(name_, head_);
  if (kind_ == InputKind::Unknown)
    throw Error(name_ + ": not a trace this page reads: it looks like " + looks_like(head_of(head_, name_)) +
                " (it reads Chakra .et, PyTorch host ET and Kineto JSON, ASTRA-sim text workloads, network YAML, "
                "system, remote-memory and communicator-group JSON)");
  kind_known_ = true;
  streaming_ = kind_ == InputKind::ChakraEt && !is_gzip(head_);
}

uint64_t Workspace::Loading::bytes_wanted() const {
  const uint64_t rest = total_ - pieces_->received();
  if (!streaming_ || done_) return rest;
  if (waiting_for_bytes()) return rest;  // decoding waits for the rest of a record: more, whatever is held
  return std::min(rest, pieces_->held() < kHeldBytes ? kHeldBytes - pieces_->held() : 0);
}

bool Workspace::Loading::complete() const { return pieces_->complete(); }

bool Workspace::Loading::waiting_for_bytes() const {
  if (done_ || complete()) return false;
  if (!kind_known_ || !streaming_) return true;
  return reader_ ? !first_node_pending_ && reader_->offset() >= framed_ : framed_ == 0;
}

const char* Workspace::Loading::phase() const {
  if (kind_ != InputKind::ChakraEt) return kind_known_ && complete() ? "opening" : "reading";
  if (streaming_ && !complete()) return "reading and decoding";
  return complete() ? "decoding" : "reading";
}

uint64_t Workspace::Loading::fingerprint() const {
  if (!complete()) throw Error(name_ + ": the file has not arrived whole");
  return file_fingerprint(total_, head_, tail_);
}

void Workspace::Loading::frame_records() {
  if (pieces_->complete()) {
    framed_ = total_;  // the reader sees the true end (and reports a cut-off record)
  } else {
    for (;;) {
      uint8_t prefix[10];
      const size_t n = static_cast<size_t>(std::min<uint64_t>(10, pieces_->received() - framed_));
      if (n == 0 || !pieces_->peek(framed_, prefix, n)) break;
      uint64_t length = 0;
      size_t used = 0;
      while (used < n) {
        length |= static_cast<uint64_t>(prefix[used] & 0x7F) << (7 * used);
        if (!(prefix[used++] & 0x80)) break;
      }
      if (prefix[used - 1] & 0x80) {
        if (used == 10) framed_ = pieces_->received();  // no varint: let the reader say so
        break;
      }
      if (length > pieces_->received() - framed_ - used) break;  // the record is still arriving
      framed_ += used + length;
    }
  }
  pieces_->set_readable(framed_);
}

bool Workspace::Loading::step(uint32_t max_nodes) {
  if (done_) return true;
  if (!kind_known_) return false;  // its first bytes are still arriving
  auto start = Clock::now();
  if (!streaming_ && !pieces_->complete()) return false;
  if (kind_ == InputKind::ChakraEt) {
    if (streaming_) frame_records();
    if (!reader_) {
      if (streaming_ && framed_ == 0 && !pieces_->complete()) return false;  // record 0 is still arriving
      reader_ = std::make_unique<EtReader>(streaming_ ? std::unique_ptr<ByteSource>(std::move(arriving_))
                                                      : memory_input(bytes_, name_));
      reader_->read_metadata(trace_);
      first_node_pending_ = !reader_->has_metadata();
    }
    for (uint32_t i = 0; i < max_nodes; ++i) {
      if (streaming_ && !first_node_pending_ && reader_->offset() >= framed_ && !pieces_->complete()) break;
      first_node_pending_ = false;
      if (!reader_->next_node(trace_, draft_)) {
        done_ = true;
        break;
      }
      trace_.append(draft_);
    }
  } else {
    done_ = true;  // the rest of the work happens in finish()
  }
  elapsed_ms_ += ms_since(start);
  return done_;
}

double Workspace::Loading::fraction() const {
  if (done_) return 1;
  if (total_ == 0) return 0;
  if (!reader_) return static_cast<double>(pieces_->received()) / static_cast<double>(total_);
  if (!streaming_ && is_gzip(bytes_)) return -1;
  return static_cast<double>(reader_->offset()) / static_cast<double>(total_);
}

uint64_t Workspace::Loading::nodes() const { return trace_.size(); }

std::unique_ptr<Workspace::Loading> Workspace::begin_pieces(const std::string& name, uint64_t total_bytes) {
  auto loading = std::unique_ptr<Loading>(new Loading());
  loading->name_ = name;
  loading->total_ = total_bytes;
  loading->arriving_ = std::make_unique<PieceSource>(name, total_bytes);
  loading->pieces_ = loading->arriving_.get();
  if (total_bytes == 0) loading->add_bytes({});  // nothing will arrive: say what it is now
  return loading;
}

std::unique_ptr<Workspace::Loading> Workspace::begin(std::span<const uint8_t> bytes, const std::string& name) {
  std::unique_ptr<Loading> loading = begin_pieces(name, bytes.size());
  if (!bytes.empty()) loading->add_bytes(bytes);
  return loading;
}

bool Workspace::check_one(uint32_t max_nodes) {
  for (const auto& t : ranks_)
    if (!t->checked) {
      if (!t->checking) t->checking = std::make_unique<Validator>(t->trace);
      if (t->checking->step(max_nodes)) {
        t->report = t->checking->take_report();
        t->checking.reset();
        t->checked = true;
      }
      return true;
    }
  return false;
}

const RankTrace* Workspace::rank(uint32_t r) const {
  for (const auto& t : ranks_)
    if (t->rank == r) return t.get();
  return nullptr;
}

void Workspace::clear() {
  ranks_.clear();
  pytorch_.clear();
  text_.reset();
  network.reset();
  system.reset();
  memory.reset();
  groups.clear();
  network_source.clear();
  system_source.clear();
}

uint32_t Workspace::next_free_rank() const {
  uint32_t r = 0;
  while (rank(r)) ++r;
  return r;
}

void Workspace::put_rank(std::unique_ptr<RankTrace> t) {
  t->summary = summarize(t->trace);
  t->checked = !defer_checks;
  if (t->checked) t->report = validate(t->trace);
  auto it = std::find_if(ranks_.begin(), ranks_.end(), [&](const auto& x) { return x->rank == t->rank; });
  if (it != ranks_.end()) {
    *it = std::move(t);
    return;
  }
  ranks_.push_back(std::move(t));
  std::sort(ranks_.begin(), ranks_.end(), [](const auto& a, const auto& b) { return a->rank < b->rank; });
}

Workspace::PytorchPair* Workspace::pair_of(uint32_t r) {
  auto it = std::find_if(pytorch_.begin(), pytorch_.end(), [&](const auto& p) { return p.first == r; });
  return it == pytorch_.end() ? nullptr : &it->second;
}

RankConversion Workspace::take_conversion(uint32_t r, PytorchPair& p) {
  p.taken = p.generation;
  return {r, p.generation, p.host, p.kineto, p.host_name, p.kineto_name};
}

std::vector<RankConversion> Workspace::take_conversions() {
  std::vector<RankConversion> jobs;
  for (auto& [r, p] : pytorch_)
    if (p.generation != p.taken) jobs.push_back(take_conversion(r, p));
  return jobs;
}

bool Workspace::conversions_waiting() const {
  return std::any_of(pytorch_.begin(), pytorch_.end(), [](const auto& p) { return p.second.generation != p.second.taken; });
}

std::unique_ptr<Workspace::Loading> Workspace::begin_converted(ConvertedRank result) {
  const PytorchPair* p = pair_of(result.rank);
  if (!p || p->generation != result.generation) return nullptr;
  auto loading = std::unique_ptr<Loading>(new Loading());
  loading->name_ = result.source;
  loading->total_ = result.et.size();
  loading->kind_ = InputKind::ChakraEt;  // known: learn_kind() is not asked
  loading->kind_known_ = true;
  loading->arriving_ = std::make_unique<PieceSource>(result.source, result.et.size());
  loading->pieces_ = loading->arriving_.get();
  loading->add_bytes(std::span(reinterpret_cast<const uint8_t*>(result.et.data()), result.et.size()));
  result.et = std::string();
  loading->converted_ = std::make_unique<ConvertedRank>(std::move(result));
  return loading;
}

bool Workspace::conversion_failed(uint32_t r, uint64_t generation) {
  PytorchPair* p = pair_of(r);
  if (!p || p->generation != generation) return false;
  for (auto [half, bytes, name] : {std::tie(p->old_host, p->host, p->host_name), std::tie(p->old_kineto, p->kineto, p->kineto_name)})
    if (half.replaced) {
      bytes = std::move(half.bytes);
      name = std::move(half.name);
      half = {};
    }
  if (p->host.empty() && p->kineto.empty()) {
    std::erase_if(pytorch_, [&](const auto& x) { return x.first == r; });
  } else {
    // The rank shows its last good conversion, which is of these files: nothing to redo, and
    // results of jobs still out are stale.
    p->generation = p->taken = next_generation_++;
  }
  return true;
}

void Workspace::instantiate_text() {
  for (uint32_t r = 0; r < text_npus_; ++r) {
    auto t = std::make_unique<RankTrace>();
    t->rank = r;
    t->source = text_name_;
    t->bytes = text_->text.size();
    auto start = Clock::now();
    t->trace = text_workload_trace(*text_, 1, 0);
    t->load_ms = ms_since(start);
    t->warnings = text_->warnings;
    t->notes.push_back("text workload instantiated for " + std::to_string(text_npus_) + " NPUs, 1 pass");
    put_rank(std::move(t));
  }
}

void Workspace::set_text_npus(uint32_t npus) {
  if (npus == 0 || npus > (1u << 16)) throw Error("text workload: NPU count must be from 1 to 65536");
  text_npus_ = npus;
  if (!text_) return;
  std::erase_if(ranks_, [&](const auto& t) { return t->source == text_name_ && t->rank >= npus; });
  instantiate_text();
}

std::string Workspace::finish(Loading& l) {
  if (!l.complete()) throw Error(l.name_ + ": the file has not arrived whole");
  if (!l.done_) while (!l.step(1u << 20)) {}
  const std::string& name = l.name_;
  auto whole_text = [&]() { return read_all(*memory_input(l.bytes_, name)); };
  switch (l.kind_) {
    case InputKind::ChakraEt: {
      if (l.converted_) return put_converted(l);
      auto t = std::make_unique<RankTrace>();
      t->rank = rank_from_file_name(name).value_or(next_free_rank());
      t->source = name;
      t->bytes = l.total_;
      t->load_ms = l.elapsed_ms_;
      t->trace = std::move(l.trace_);
      uint32_t r = t->rank;
      uint64_t nodes = t->trace.size();
      put_rank(std::move(t));
      return "rank " + std::to_string(r) + ": " + name + " (" + std::to_string(nodes) + " nodes)";
    }
    case InputKind::PytorchHostEt:
    case InputKind::KinetoTrace: {
      bool host = l.kind_ == InputKind::PytorchHostEt;
      // A Kineto trace's own distributedInfo first, then the file name.
      std::optional<uint32_t> stated = host ? rank_from_file_name(name) : kineto_file_rank(head_of(l.bytes_, name), name);
      // A file without a rank pairs with an unpaired other half, else takes a new rank.
      auto it = std::find_if(pytorch_.begin(), pytorch_.end(), [&](const auto& p) {
        if (stated) return p.first == *stated;
        return host ? p.second.host.empty() : p.second.kineto.empty();
      });
      uint32_t r = it != pytorch_.end() ? it->first : stated.value_or(next_free_rank());
      if (it == pytorch_.end()) {
        pytorch_.push_back({r, {}});
        it = pytorch_.end() - 1;
      }
      PytorchPair& p = it->second;
      PytorchPair::Half& old = host ? p.old_host : p.old_kineto;
      std::string& bytes = host ? p.host : p.kineto;
      std::string& file_name = host ? p.host_name : p.kineto_name;
      if (!old.replaced) old = {true, std::move(bytes), std::move(file_name)};
      bytes.assign(l.bytes_.begin(), l.bytes_.end());  // as given: the conversion inflates gzip
      file_name = name;
      p.generation = next_generation_++;
      return {};  // its conversion's result says what came of it
    }
    case InputKind::TextWorkload: {
      TextWorkload w = parse_text_workload(whole_text(), name);
      if (text_) std::erase_if(ranks_, [&](const auto& t) { return t->source == text_name_; });
      text_ = std::move(w);
      text_name_ = name;
      instantiate_text();
      return name + ": " + text_->type + " workload, " + std::to_string(text_->layers.size()) + " layers, " +
             std::to_string(text_npus_) + " NPUs";
    }
    case InputKind::NetworkYaml: {
      network = sim::parse_network(whole_text(), name);
      network_source = name;
      return name + ": network of " + std::to_string(network->total_npus()) + " NPUs";
    }
    case InputKind::SystemJson:
      system = sim::parse_system(whole_text(), name);
      system_source = name;
      return name + ": system config";
    case InputKind::RemoteMemoryJson:
      memory = sim::parse_remote_memory(whole_text(), name);
      return name + ": remote-memory config";
    case InputKind::CommGroupJson:
      groups = sim::parse_comm_groups(whole_text(), name);
      return name + ": " + std::to_string(groups.size()) + " communicator groups";
    case InputKind::Unknown: break;
  }
  throw Error(name + ": not a file chakrakit opens");
}

std::string Workspace::add_synthetic(const synth::SynthOptions& options) {
  auto start = Clock::now();
  std::shared_ptr<const synth::Workload> w = synth::synthesize(options);
  uint32_t n = synth::num_ranks(*w);
  if (n > 4096) throw Error("synthetic workload: " + std::to_string(n) + " ranks is more than the page holds (4096)");
  std::vector<std::unique_ptr<RankTrace>> ranks;
  for (uint32_t r = 0; r < n; ++r) {
    auto t = std::make_unique<RankTrace>();
    t->rank = r;
    t->source = "synthetic";
    synth::rank_trace(*w, r, t->trace);
    ranks.push_back(std::move(t));
  }
  sim::CommGroups new_groups;
  for (const auto& [id, members] : synth::comm_groups(*w)) {
    std::vector<uint32_t> m(members.begin(), members.end());
    new_groups[std::stoi(id)] = m;
  }
  ranks_.clear();  // the traces are replaced; dropped configs stay
  pytorch_.clear();
  text_.reset();
  groups = std::move(new_groups);
  for (auto& t : ranks) {
    t->load_ms = ms_since(start) / n;
    put_rank(std::move(t));
  }
  return "synthetic workload: " + std::to_string(n) + " ranks, " + std::to_string(synth::num_stages(*w)) + " pipeline stages";
}

std::string Workspace::add(std::span<const uint8_t> bytes, const std::string& name) {
  auto l = begin(bytes, name);
  std::string message = finish(*l);
  for (const RankConversion& job : take_conversions()) {
    ConvertedRank converted;
    try {
      converted = convert_rank(job);
    } catch (...) {
      conversion_failed(job.rank, job.generation);  // leave the workspace as it was
      throw;
    }
    message = finish(*begin_converted(std::move(converted)));
  }
  return message;
}

sim::SimJob Workspace::simulation_job(const sim::NetworkConfig& net, const sim::SystemConfig& sys,
                                      const sim::SimOptions& options) const {
  uint64_t npus = net.total_npus();
  if (ranks_.size() != npus || (npus && ranks_.back()->rank != npus - 1))
    throw Error("the network has " + std::to_string(npus) + " NPUs but " + std::to_string(ranks_.size()) +
                " ranks are loaded" + (ranks_.empty() ? "" : " (ranks " + std::to_string(ranks_.front()->rank) + " to " +
                                                                  std::to_string(ranks_.back()->rank) + ")") +
                "; the simulator needs one trace per NPU, ranks 0 to " + std::to_string(npus - 1));
  sim::SimJob job;
  job.traces.reserve(npus);
  job.options = options;
  job.options.progress = nullptr;
  job.options.expected_nodes = 0;
  for (const auto& t : ranks_) {
    job.traces.push_back(encode_et(t->trace));
    job.options.expected_nodes += t->trace.size();
  }
  job.network = net;
  job.system = sys;
  job.memory = memory.value_or(sim::RemoteMemoryConfig{});
  job.groups = groups;
  return job;
}

sim::SimResult Workspace::simulate(const sim::NetworkConfig& net, const sim::SystemConfig& sys,
                                   const sim::SimOptions& options) const {
  return sim::run_job(simulation_job(net, sys, options), options.progress);
}

std::string anonymized_archive(const Workspace& workspace, const AnonymizeOptions& options, AnonymizeReport& report) {
  const Anonymizer anonymizer(options);
  std::vector<std::pair<std::string, std::string>> files;
  Trace anonymous;
  for (const auto& r : workspace.ranks()) {
    anonymizer.anonymize(r->trace, anonymous, report);
    files.emplace_back("rank." + std::to_string(r->rank) + ".et", encode_et(anonymous));
  }
  if (!workspace.groups.empty()) {
    std::map<std::string, std::vector<int64_t>> groups;
    for (const auto& [id, members] : workspace.groups) groups[std::to_string(id)] = std::vector<int64_t>(members.begin(), members.end());
    files.emplace_back("comm_group.json", comm_group_json(groups));
  }
  return zip_store(files);
}

}  // namespace chakra
