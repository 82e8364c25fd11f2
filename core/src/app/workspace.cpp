#include "chakra/app/workspace.h"

#include <algorithm>
#include <chrono>
#include <cctype>

#include "chakra/app/share_link.h"
#include "chakra/astra/config.h"
#include "chakra/format/et_json.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/stablehlo/stablehlo.h"
#include "chakra/support/error.h"
#include "chakra/support/stopwatch.h"
#include "chakra/support/text.h"
#include <nlohmann/json.hpp>

namespace chakra {

namespace {

constexpr uint32_t kMaxRanks = 4096;  // of a run made here (synthetic, StableHLO)

using Clock = std::chrono::steady_clock;

}  // namespace

WorkspaceFile::~WorkspaceFile() = default;

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

void WorkspaceFile::add_bytes(std::span<const uint8_t> piece) {
  pieces_->add(piece);  // throws past the file's size
  if (head_.size() < kFingerprintEnd)
    head_.insert(head_.end(), piece.begin(), piece.begin() + std::min(piece.size(), kFingerprintEnd - head_.size()));
  tail_.insert(tail_.end(), piece.end() - std::min(piece.size(), kFingerprintEnd), piece.end());
  if (tail_.size() > kFingerprintEnd) tail_.erase(tail_.begin(), tail_.end() - kFingerprintEnd);
  if (!kind_known_ && pieces_->received() >= std::min<uint64_t>(total_, kFingerprintEnd)) learn_kind();
  if (streaming_) frame_records();   // so bytes_wanted() counts what can be decoded now
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

void WorkspaceFile::learn_kind() {
  // The first 64 KiB are in: what kind of file this is, and whether it can be decoded as it comes.
  const InputDescription d = describe_input(name_, head_);
  kind_ = d.kind;
  if (kind_ == InputKind::Unknown)
    throw Error(name_ + ": not a trace this page reads: it looks like " + d.what + " (it reads " + importer_names() +
                ")");
  kind_known_ = true;
  streaming_ = kind_ == InputKind::ChakraEt && !is_gzip(head_);
}

uint64_t WorkspaceFile::bytes_wanted() const {
  const uint64_t rest = total_ - pieces_->received();
  if (!streaming_ || done_) return rest;
  if (waiting_for_bytes()) return rest;  // decoding waits for the rest of a record: more, whatever is held
  return std::min(rest, pieces_->held() < kHeldBytes ? kHeldBytes - pieces_->held() : 0);
}

bool WorkspaceFile::complete() const { return pieces_->complete(); }

bool WorkspaceFile::waiting_for_bytes() const {
  if (done_ || complete()) return false;
  if (!kind_known_ || !streaming_) return true;
  return reader_ ? !first_node_pending_ && reader_->offset() >= framed_ : framed_ == 0;
}

const char* WorkspaceFile::phase() const {
  if (kind_ != InputKind::ChakraEt) return kind_known_ && complete() ? "opening" : "reading";
  if (streaming_ && !complete()) return "reading and decoding";
  return complete() ? "decoding" : "reading";
}

uint64_t WorkspaceFile::fingerprint() const {
  if (!complete()) throw Error(name_ + ": the file has not arrived whole");
  return file_fingerprint(total_, head_, tail_);
}

void WorkspaceFile::frame_records() {
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

bool WorkspaceFile::step(uint32_t max_nodes) {
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
    if (!done_) reserve_for_rest();
  } else {
    done_ = true;  // the rest of the work happens in finish()
  }
  elapsed_ms_ += ms_since(start);
  return done_;
}

// Once a sample of the file is decoded (4 MiB, or a 64th of it), the columns are made room for
// its size: what they hold per byte read so far, times the file's bytes, and a twentieth more.
// Later steps then append in place; growing by steps copied each column again and again.
void WorkspaceFile::reserve_for_rest() {
  if (reserved_ || (!streaming_ && is_gzip(bytes_))) return;  // a gzip file's size is not its records'
  const uint64_t read = reader_->offset();
  if (read == 0 || read < std::min<uint64_t>(uint64_t{4} << 20, total_ / 64) || read >= total_) return;
  trace_.reserve_scaled(1.05 * static_cast<double>(total_) / static_cast<double>(read));
  reserved_ = true;
}

double WorkspaceFile::fraction() const {
  if (done_) return 1;
  if (total_ == 0) return 0;
  if (!reader_) return static_cast<double>(pieces_->received()) / static_cast<double>(total_);
  if (!streaming_ && is_gzip(bytes_)) return -1;
  return static_cast<double>(reader_->offset()) / static_cast<double>(total_);
}

uint64_t WorkspaceFile::nodes() const { return trace_.size(); }

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

std::vector<const Trace*> Workspace::traces() const {
  std::vector<const Trace*> out;
  out.reserve(ranks_.size());
  for (const auto& r : ranks_) out.push_back(&r->trace);
  return out;
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
  return std::any_of(pytorch_.begin(), pytorch_.end(),
                     [](const auto& p) { return p.second.generation != p.second.taken; });
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
  for (auto [half, bytes, name] :
       {std::tie(p->old_host, p->host, p->host_name), std::tie(p->old_kineto, p->kineto, p->kineto_name)})
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
  if (!l.done_)
    while (!l.step(1u << 20)) {}
  if (l.kind_ == InputKind::Unknown) throw Error(l.name_ + ": not a file chakrakit opens");
  return importer(l.kind_).open(*this, l);
}

std::string WorkspaceFile::text() const { return read_all(*memory_input(bytes_, name_)); }

std::string Workspace::put_pytorch_file(const WorkspaceFile& l) {
  const std::string& name = l.name_;
  bool host = l.kind_ == InputKind::PytorchHostEt;
  // A Kineto trace's own distributedInfo first, then the file name.
  std::optional<uint32_t> stated =
      host ? rank_from_file_name(name) : kineto_file_rank(input_head(l.bytes_, name), name);
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

std::string Workspace::put_text_workload(const std::string& name, TextWorkload w) {
  if (text_) std::erase_if(ranks_, [&](const auto& t) { return t->source == text_name_; });
  text_ = std::move(w);
  text_name_ = name;
  instantiate_text();
  return name + ": " + text_->type + " workload, " + std::to_string(text_->layers.size()) + " layers, " +
         std::to_string(text_npus_) + " NPUs";
}

std::string Workspace::put_file_rank(const std::string& name, uint64_t bytes, double load_ms, Trace trace) {
  auto t = std::make_unique<RankTrace>();
  t->rank = rank_from_file_name(name).value_or(next_free_rank());
  t->source = name;
  t->bytes = bytes;
  t->load_ms = load_ms;
  t->trace = std::move(trace);
  const uint32_t r = t->rank;
  const uint64_t nodes = t->trace.size();
  put_rank(std::move(t));
  return "rank " + std::to_string(r) + ": " + name + " (" + std::to_string(nodes) + " nodes)";
}

std::string Workspace::put_stablehlo(const std::string& text, const std::string& name) {
  const auto start = Clock::now();
  stablehlo::AnalyzeOptions options;
  options.max_exec_ops = max_stablehlo_ops;
  stablehlo::Analysis an;
  try {
    an = stablehlo::analyze(stablehlo::parse_program(text, name), 0, options);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("ops after unrolling") == std::string::npos) throw;
    throw Error(what + " (the page's limit; chakra import stablehlo takes up to 50 million)");
  }
  if (an.devices > kMaxRanks)
    throw Error(name + ": a program for " + std::to_string(an.devices) + " devices; the page holds up to " +
                std::to_string(kMaxRanks) + " ranks");
  // The CLI's default device: said on every rank, as the durations depend on it.
  const stablehlo::DeviceSpec device = stablehlo::device_preset("h100");
  const std::string note = "per-device trace of a StableHLO program, compute modelled on " + device.name +
                           " (chakra import stablehlo --device for another)";
  std::vector<std::unique_ptr<RankTrace>> ranks;
  for (uint32_t d = 0; d < an.devices; ++d) {
    auto t = std::make_unique<RankTrace>();
    t->rank = d;
    t->source = name;
    t->bytes = text.size();
    stablehlo::device_trace(an, device, d, t->trace);
    t->notes.push_back(note);
    ranks.push_back(std::move(t));
  }
  astra::CommGroups new_groups;
  for (const auto& [id, members] : stablehlo::comm_groups(an))
    new_groups[std::stoi(id)] = std::vector<uint32_t>(members.begin(), members.end());
  const double ms = ms_since(start) / std::max<uint32_t>(1, an.devices);
  for (auto& t : ranks) t->load_ms = ms;
  replace_ranks(std::move(ranks), std::move(new_groups));
  return name + ": StableHLO program on " + std::to_string(an.devices) + " devices, " +
         std::to_string(an.collectives.size()) + " collectives; compute modelled on " + device.name;
}

void Workspace::replace_ranks(std::vector<std::unique_ptr<RankTrace>> ranks, astra::CommGroups new_groups) {
  ranks_.clear();  // the traces are replaced; dropped configs stay
  pytorch_.clear();
  text_.reset();
  groups = std::move(new_groups);
  for (auto& t : ranks) put_rank(std::move(t));
}

std::string Workspace::add_synthetic(const synth::SynthOptions& options) {
  auto start = Clock::now();
  std::shared_ptr<const synth::Workload> w = synth::synthesize(options);
  uint32_t n = synth::num_ranks(*w);
  if (n > kMaxRanks)
    throw Error("synthetic workload: " + std::to_string(n) + " ranks is more than the page holds (" +
                std::to_string(kMaxRanks) + ")");
  std::vector<std::unique_ptr<RankTrace>> ranks;
  for (uint32_t r = 0; r < n; ++r) {
    auto t = std::make_unique<RankTrace>();
    t->rank = r;
    t->source = "synthetic";
    synth::rank_trace(*w, r, t->trace);
    ranks.push_back(std::move(t));
  }
  astra::CommGroups new_groups;
  for (const auto& [id, members] : synth::comm_groups(*w)) {
    std::vector<uint32_t> m(members.begin(), members.end());
    new_groups[std::stoi(id)] = m;
  }
  for (auto& t : ranks) t->load_ms = ms_since(start) / n;
  replace_ranks(std::move(ranks), std::move(new_groups));
  return "synthetic workload: " + std::to_string(n) + " ranks, " + std::to_string(synth::num_stages(*w)) +
         " pipeline stages";
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

chakra::SimJob Workspace::simulation_job(const astra::NetworkConfig& net, const astra::SystemConfig& sys,
                                         const sim::SimOptions& options) const {
  uint64_t npus = net.total_npus();
  if (ranks_.size() != npus || (npus && ranks_.back()->rank != npus - 1))
    throw Error(
        "the network has " + std::to_string(npus) + " NPUs but " + std::to_string(ranks_.size()) + " ranks are loaded" +
        (ranks_.empty()
             ? ""
             : " (ranks " + std::to_string(ranks_.front()->rank) + " to " + std::to_string(ranks_.back()->rank) + ")") +
        "; the simulator needs one trace per NPU, ranks 0 to " + std::to_string(npus - 1));
  chakra::SimJob job;
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
  job.memory = memory.value_or(astra::RemoteMemoryConfig{});
  job.groups = groups;
  return job;
}

sim::SimResult Workspace::simulate(const astra::NetworkConfig& net, const astra::SystemConfig& sys,
                                   const sim::SimOptions& options) const {
  return chakra::run_job(simulation_job(net, sys, options), options.progress);
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
    for (const auto& [id, members] : workspace.groups)
      groups[std::to_string(id)] = std::vector<int64_t>(members.begin(), members.end());
    files.emplace_back("comm_group.json", astra::format_comm_groups(groups));
  }
  return zip_store(files);
}

}  // namespace chakra
