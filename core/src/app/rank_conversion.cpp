#include "chakra/app/rank_conversion.h"

#include <chrono>
#include <span>

#include "byte_codec.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/pytorch/pytorch_convert.h"
#include "chakra/pytorch/trace_link.h"
#include "chakra/support/error.h"
#include "chakra/support/stopwatch.h"

namespace chakra {

namespace {

constexpr char kJobMagic[8] = {'C', 'K', 'R', 'C', 'O', 'N', 'V', '1'};
constexpr char kResultMagic[8] = {'C', 'K', 'R', 'C', 'O', 'N', 'E', '1'};

std::unique_ptr<ByteSource> input(const std::string& bytes, const std::string& name) {
  return memory_input(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), name);
}

void write_strings(codec::Writer& w, const std::vector<std::string>& strings) {
  w.u64(strings.size());
  for (const std::string& s : strings) w.str(s);
}
void read_strings(codec::Reader& r, std::vector<std::string>& strings) {
  strings.resize(r.count(8));
  for (std::string& s : strings) s = r.str();
}

}  // namespace

ConvertedRank convert_rank(const RankConversion& job) {
  if (job.host.empty() && job.kineto.empty()) throw Error("rank " + std::to_string(job.rank) + ": no files to convert");
  const auto start = std::chrono::steady_clock::now();
  ConvertedRank out;
  out.rank = job.rank;
  out.generation = job.generation;
  out.bytes = job.host.size() + job.kineto.size();
  const std::string r = std::to_string(job.rank);
  Trace trace;
  if (job.host.empty()) {
    // Until its host ET comes, a Kineto trace shows what it measured (a timeline, no replay).
    out.source = job.kineto_name;
    trace = kineto_activity(input(job.kineto, job.kineto_name));
    out.notes.push_back("Kineto trace alone: its measured timeline; drop rank " + r +
                        "'s host ET to link them for a replay");
    out.message = "rank " + r + ": Kineto trace " + job.kineto_name + ", " + std::to_string(trace.size()) +
                  " measured ops (its host ET links them for a replay)";
  } else {
    std::string linked;
    if (!job.kineto.empty()) {
      StringSink sink;
      // With sync dependencies and blocked time, so a simulation replays what ran
      // (core/docs/pytorch-replay.md).
      LinkOptions link_options;
      link_options.sync_deps = true;
      LinkReport report =
          link_traces(input(job.host, job.host_name), input(job.kineto, job.kineto_name), sink, link_options);
      linked = std::move(sink.out);
      out.notes.push_back("linked with " + std::string(link_method_name(report.method)) + ": " +
                          std::to_string(report.host_ops_linked) + " of " + std::to_string(report.host_nodes) +
                          " host ops timed, " + std::to_string(report.gpu_nodes) + " GPU ops");
      out.warnings = report.warnings;
      if (report.gpu_ops > report.gpu_ops_linked)
        out.warnings.push_back(std::to_string(report.gpu_ops - report.gpu_ops_linked) + " of the Kineto trace's " +
                               std::to_string(report.gpu_ops) +
                               " GPU ops are left out: no linked host op launched them (other iterations, or "
                               "launches the host ET did not record)");
      out.source = job.host_name + " + " + job.kineto_name;
    } else {
      out.source = job.host_name;
      out.notes.push_back("host ET without a Kineto trace: converted unlinked (drop rank " + r +
                          "'s Kineto trace to add GPU ops and times)");
    }
    PytorchConvertOptions options;
    options.rank = job.rank;
    PytorchConvertResult result =
        convert_pytorch(linked.empty() ? input(job.host, job.host_name) : input(linked, out.source), options);
    for (std::string& w : result.warnings) out.warnings.push_back(std::move(w));
    for (const auto& [pg, members] : result.process_groups) {
      int id = 0;
      try {
        id = std::stoi(pg);
      } catch (...) {
        continue;  // names that are not numbers are not ASTRA-sim communicator ids
      }
      if (id <= 0) continue;
      std::vector<uint32_t> ranks;
      for (int64_t m : members) ranks.push_back(static_cast<uint32_t>(m));
      out.groups.try_emplace(id, std::move(ranks));
    }
    trace = std::move(result.trace);
    out.message =
        "rank " + r + ": " + (job.kineto.empty() ? "converted host ET " : "linked and converted ") + out.source;
  }
  out.et = encode_et(trace);
  out.convert_ms = ms_since(start);
  return out;
}

std::string encode_conversion(const RankConversion& job) {
  codec::Writer w(kJobMagic);
  w.raw(job.rank);
  w.u64(job.generation);
  for (const std::string* s : {&job.host, &job.kineto, &job.host_name, &job.kineto_name}) w.str(*s);
  return std::move(w.out);
}

RankConversion decode_conversion(std::string_view bytes) {
  codec::Reader r(bytes, kJobMagic, "rank conversion");
  RankConversion job;
  job.rank = r.raw<uint32_t>();
  job.generation = r.u64();
  for (std::string* s : {&job.host, &job.kineto, &job.host_name, &job.kineto_name}) *s = r.str();
  r.end();
  return job;
}

std::string encode_converted(const ConvertedRank& c) {
  codec::Writer w(kResultMagic);
  w.raw(c.rank);
  w.u64(c.generation);
  w.str(c.source);
  w.u64(c.bytes);
  w.f64(c.convert_ms);
  w.str(c.et);
  write_strings(w, c.notes);
  write_strings(w, c.warnings);
  codec::write_groups(w, c.groups);
  w.str(c.message);
  return std::move(w.out);
}

ConvertedRank decode_converted(std::string_view bytes) {
  codec::Reader r(bytes, kResultMagic, "converted rank");
  ConvertedRank c;
  c.rank = r.raw<uint32_t>();
  c.generation = r.u64();
  c.source = r.str();
  c.bytes = r.u64();
  c.convert_ms = r.f64();
  c.et = r.str();
  read_strings(r, c.notes);
  read_strings(r, c.warnings);
  c.groups = codec::read_groups(r);
  c.message = r.str();
  r.end();
  return c;
}

}  // namespace chakra
