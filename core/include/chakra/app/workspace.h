// A set of traces and simulator settings opened together, as the web app holds them: files are
// recognised by content, ranks by name, PyTorch host ETs paired with their Kineto traces and
// converted, ASTRA-sim text workloads instantiated per NPU, configs parsed. The app only shows
// what this holds; every decision about files lives here so it is tested without a browser.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/analysis/summary.h"
#include "chakra/analysis/validate.h"
#include "chakra/app/importers.h"
#include "chakra/app/rank_conversion.h"
#include "chakra/app/sim_job.h"
#include "chakra/app/sweep.h"
#include "chakra/astra/text_workload.h"
#include "chakra/format/et_io.h"
#include "chakra/synth/synth.h"
#include "chakra/trace/anonymize.h"
#include "chakra/trace/trace.h"

namespace chakra {

struct RankTrace {
  uint32_t rank = 0;
  std::string source;  // file name(s) it came from
  uint64_t bytes = 0;  // size of those files
  double load_ms = 0;
  Trace trace;
  TraceSummary summary;
  ValidationReport report;
  bool checked = true;                  // false until `report` is made (Workspace::defer_checks)
  std::unique_ptr<Validator> checking;  // making `report`, step by step (Workspace::check_one)
  std::vector<std::string> notes;       // what linking/conversion did
  std::vector<std::string> warnings;    // what they left out or guessed: shown as warnings, never "ok"
};

// Opening one file in steps, so a page can draw between them. Its bytes may arrive in pieces
// (a page reading a large file in slices): a Chakra .et is then decoded as its records
// arrive and only the undecoded pieces are held, so the file is never in memory whole;
// other kinds (and gzip) are gathered whole first. For .et files each step decodes at most
// `max_nodes` nodes; other kinds are handled in one step.
class WorkspaceFile {
 public:
  ~WorkspaceFile();
  // The next bytes of the file. Throws chakra::Error naming the file when they run past its
  // size or, once its first 64 KiB are in, when it is of no kind the workspace takes.
  void add_bytes(std::span<const uint8_t> piece);
  // How many more bytes it takes now: all the rest while gathering a file whole, else up to
  // a bound on what is held undecoded (0: step() first).
  uint64_t bytes_wanted() const;
  bool complete() const;  // every byte arrived
  // Nothing to do until more bytes arrive.
  bool waiting_for_bytes() const;
  // What it is doing, for a status line: "reading" (bytes arriving to be read whole),
  // "decoding" (a .et), "reading and decoding" (a .et as it arrives), "opening" (the rest
  // happens in Workspace::finish: linking, converting, parsing).
  const char* phase() const;
  // Does some work; true when finished (then call Workspace::finish); false also while it
  // waits for bytes.
  bool step(uint32_t max_nodes);
  // 0..1, or -1 when unknown (gzip input).
  double fraction() const;
  uint64_t nodes() const;
  const std::string& name() const { return name_; }
  uint64_t size() const { return total_; }  // the file's bytes
  InputKind kind() const { return kind_; }
  // file_fingerprint() of the whole file, once complete().
  uint64_t fingerprint() const;

  // For importers' open (importers.h), once the file arrived whole:
  std::string text() const;                                     // its content, inflated when gzip
  std::span<const uint8_t> bytes() const { return bytes_; }     // as given
  double decode_ms() const { return elapsed_ms_; }              // a .et's decoding as it arrived
  Trace take_trace() { return std::move(trace_); }              // the .et decoded
  bool is_conversion() const { return converted_ != nullptr; }  // a rank conversion's result

 private:
  friend class Workspace;
  void learn_kind();     // from the first 64 KiB; throws for a file of no kind it takes
  void frame_records();  // how far whole .et records have arrived: the reader may go there
  void reserve_for_rest();
  std::string name_;
  std::unique_ptr<ConvertedRank> converted_;  // a rank conversion's result (its .et in bytes_)
  uint64_t total_ = 0;
  bool kind_known_ = false;
  InputKind kind_ = InputKind::Unknown;
  bool streaming_ = false;                 // a plain .et decoded as it arrives
  std::unique_ptr<PieceSource> arriving_;  // the pieces; moved into reader_ when streaming
  PieceSource* pieces_ = nullptr;          // arriving_, or the one reader_ owns
  uint64_t framed_ = 0;                    // stream offset where the arrived whole records end
  bool first_node_pending_ = false;        // record 0 was a Node, held by the reader
  std::vector<uint8_t> head_, tail_;       // first and last 64 KiB, for the fingerprint
  std::vector<uint8_t> bytes_;             // the whole file, for the kinds read whole
  std::unique_ptr<EtReader> reader_;
  Trace trace_;
  NodeDraft draft_;
  bool done_ = false;
  bool reserved_ = false;  // the trace's columns sized for the whole file (reserve_for_rest)
  double elapsed_ms_ = 0;
};

class Workspace {
 public:
  using Loading = WorkspaceFile;  // a file being opened

  // Starts opening a file of `total_bytes` whose bytes come through Loading::add_bytes.
  std::unique_ptr<Loading> begin_pieces(const std::string& name, uint64_t total_bytes);
  // Validation of a rank added by finish() waits for check_one() (a page validates a large
  // trace over frames of its own, not in the one that decoded its last nodes).
  bool defer_checks = false;
  // The most ops a StableHLO program opened here may execute once its loops are unrolled (each
  // is held: a tab's memory, not the CLI's 50 million, sets the limit).
  uint64_t max_stablehlo_ops = 5'000'000;
  // Validates part of a rank that waits for it (up to `max_nodes` nodes, or one of validation's
  // whole-trace steps: Validator::step); false when none waits.
  bool check_one(uint32_t max_nodes = UINT32_MAX);
  // PyTorch host ETs and Kineto traces are linked and converted per rank (rank_conversion.h),
  // not by finish(), which only records that the file's rank needs it: take_conversions() hands
  // out the jobs (one per rank, for its latest files), the caller runs convert_rank() wherever
  // it likes (the page: in Web Workers, so its module need not link the converter) and gives
  // the outcome back to begin_converted() or conversion_failed(). add() does all of it here.
  std::vector<RankConversion> take_conversions();
  // Opens a conversion's result in steps like a file (its .et decoded `max_nodes` a step);
  // finish() then puts the rank (and returns "" when the workspace was cleared meanwhile). Null
  // when the result is stale: the rank's files changed since its job was taken (a newer job
  // comes) or the workspace was cleared.
  std::unique_ptr<Loading> begin_converted(ConvertedRank result);
  // The conversion failed: the rank's files since its last good conversion are dropped, so the
  // workspace is as before them. False when the job was stale (nothing changes).
  bool conversion_failed(uint32_t rank, uint64_t generation);
  // Ranks whose files changed since their job was taken (take_conversions has work).
  bool conversions_waiting() const;
  // Starts opening a file held whole (the bytes are copied). Throws chakra::Error naming the
  // file when it is of no kind this workspace takes.
  std::unique_ptr<Loading> begin(std::span<const uint8_t> bytes, const std::string& name);
  // Adds what a finished Loading produced; returns a one-line description (empty for a PyTorch
  // file: its rank's conversion's finish() describes it). Throws chakra::Error
  // naming the file for malformed content; the workspace is then unchanged.
  std::string finish(Loading& loading);
  // Replaces the ranks with a synthetic training step (chakra synth) and its communicator
  // groups; returns a one-line description. Throws chakra::Error for inconsistent options.
  std::string add_synthetic(const synth::SynthOptions& options);

  // begin + step to the end + finish, and the rank's conversion when it is a PyTorch file (then
  // the conversion's description; a failed conversion throws and leaves the workspace as it was).
  std::string add(std::span<const uint8_t> bytes, const std::string& name);

  // Ranks by rank number (a file without a rank in its name takes the next free one).
  const std::vector<std::unique_ptr<RankTrace>>& ranks() const { return ranks_; }
  const RankTrace* rank(uint32_t r) const;
  // The ranks' traces in rank order (what analyses and timelines of the whole run take).
  std::vector<const Trace*> traces() const;
  void clear();

  // Settings read from dropped config files (the last one of each kind wins).
  std::optional<astra::NetworkConfig> network;
  std::optional<astra::SystemConfig> system;
  std::optional<astra::RemoteMemoryConfig> memory;
  astra::CommGroups groups;
  std::string network_source, system_source;
  // The last table chakra sweep wrote that was opened (RESULTS.jsonl), for a sweep view to take.
  struct SweepTableFile {
    std::string name;
    sweep::ReadRows table;
  };
  std::optional<SweepTableFile> sweep_table;
  // Results chakra suite run wrote (or a board's, BOARD.json) opened and not yet taken by a
  // suite view.
  struct SuiteResultFile {
    std::string name;
    sweep::Json result;
  };
  std::vector<SuiteResultFile> suite_results;

  // A text workload is instantiated for this many NPUs (default 8, or a loaded network's size).
  void set_text_npus(uint32_t npus);
  uint32_t text_npus() const { return text_npus_; }

  // A simulation of ranks 0..N-1 (N = the network's NPUs) with these settings, ready to run here
  // or elsewhere (options.expected_nodes is filled in). Throws chakra::Error when the loaded
  // ranks are not exactly 0..N-1.
  chakra::SimJob simulation_job(const astra::NetworkConfig& network, const astra::SystemConfig& system,
                                const sim::SimOptions& options = {}) const;
  // Runs simulation_job() here.
  sim::SimResult simulate(const astra::NetworkConfig& network, const astra::SystemConfig& system,
                          const sim::SimOptions& options = {}) const;

  // What importers' open functions (importers.def) put in; each returns a line saying what it
  // became and throws chakra::Error naming the file, the workspace then unchanged.
  // A trace of one rank read from a file: its rank from the name, else the next free one.
  std::string put_file_rank(const std::string& name, uint64_t bytes, double load_ms, Trace trace);
  std::string put_converted(WorkspaceFile& converted);  // a .et from begin_converted()
  // A StableHLO program's devices as the ranks (up to max_stablehlo_ops executed ops).
  std::string put_stablehlo(const std::string& text, const std::string& name);
  // A PyTorch host ET or Kineto trace: recorded for its rank's conversion (take_conversions).
  std::string put_pytorch_file(const WorkspaceFile& file);
  // A text workload, instantiated for text_npus() NPUs in place of the last one's ranks.
  std::string put_text_workload(const std::string& name, TextWorkload workload);

 private:
  void put_rank(std::unique_ptr<RankTrace> rank);
  // Replaces the ranks (and their groups) with a whole run's traces, as a synthetic step or a
  // StableHLO program gives them; notes go to every rank.
  void replace_ranks(std::vector<std::unique_ptr<RankTrace>> ranks, astra::CommGroups new_groups);
  uint32_t next_free_rank() const;
  void instantiate_text();

  std::vector<std::unique_ptr<RankTrace>> ranks_;
  struct PytorchPair {
    std::string host, kineto;  // the files' bytes, kept to relink when the other half arrives
    std::string host_name, kineto_name;
    uint64_t generation = 0;  // of the latest files
    uint64_t taken = 0;       // the generation whose job take_conversions() handed out last
    // The halves as of the last good conversion, for the halves given since (restored when
    // their conversion fails).
    struct Half {
      bool replaced = false;
      std::string bytes, name;
    } old_host, old_kineto;
  };
  PytorchPair* pair_of(uint32_t rank);
  RankConversion take_conversion(uint32_t rank, PytorchPair& pair);
  uint64_t next_generation_ = 1;  // never reset: results of jobs from before clear() stay stale
  std::vector<std::pair<uint32_t, PytorchPair>> pytorch_;
  std::optional<TextWorkload> text_;
  std::string text_name_;
  uint32_t text_npus_ = 8;
};

// What the page's "Export anonymized copy" downloads: a ZIP archive of every rank anonymized
// (rank.<r>.et; no source file names, which may name the model) and, when the workspace has
// process groups, comm_group.json (numbers only).
std::string anonymized_archive(const Workspace& workspace, const AnonymizeOptions& options, AnonymizeReport& report);

}  // namespace chakra
