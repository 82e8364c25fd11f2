// Shared plumbing of the `chakra` command-line tool: argument parsing, exit codes, progress on
// the terminal, Ctrl-C. Commands are thin: they parse arguments and call the core library.
#pragma once

#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "chakra/app/sweep.h"
#include "chakra/format/et_io.h"
#include "chakra/format/io.h"
#include "chakra/support/progress.h"
#include "chakra/trace/schema.h"

namespace chakra {
struct InputDescription;  // chakra/app/workspace.h
}

namespace cli {

// Exit codes of every command.
enum Exit : int {
  kOk = 0,
  kFailed = 1,  // the input is bad, or validation found errors
  kUsage = 2,   // wrong command line (as Python's argparse, which the reference tools use)
  kInterrupted = 130,
};

// Minimal option parser: "--name value", "--name=value", boolean flags, positionals.
// --help/-h prints the help text and exits 0; mistakes print the usage line and exit 2.
class Args {
 public:
  Args(std::string prog, std::string description);

  Args& flag(const std::string& name, const std::string& help);
  Args& option(const std::string& name, const std::string& metavar, const std::string& help,
               const std::string& default_value = "", bool required = false);
  Args& positional(const std::string& name, const std::string& help, bool required = true, bool repeated = false);
  // A short spelling of an option declared before, e.g. alias("-o", "--output").
  Args& alias(const std::string& short_name, const std::string& name);
  Args& epilog(const std::string& text);
  // Unique prefixes of long options are accepted (as argparse does); used by drop-in aliases.
  Args& allow_abbreviations();

  // Parses the arguments that follow the program/command name.
  void parse(int argc, char** argv);

  bool has(const std::string& name) const;
  const std::string& get(const std::string& name) const;
  // A non-negative integer option no larger than `max` (callers narrowing to a smaller type
  // pass its maximum, so an out-of-range value is a usage error, never a wrapped number).
  uint64_t get_uint(const std::string& name, uint64_t max = UINT64_MAX) const;
  // A finite number > 0 (e.g. a scale factor); anything else is a usage error.
  double get_positive_double(const std::string& name) const;
  const std::vector<std::string>& values(const std::string& positional) const;

  std::string usage() const;
  std::string help() const;
  [[noreturn]] void fail(const std::string& message) const;

 private:
  struct Spec {
    std::string name, metavar, help, default_value;
    bool takes_value, required, is_positional, repeated;
  };
  const Spec* find_option(const std::string& name) const;

  std::string prog_, description_, epilog_;
  bool abbreviations_ = false;
  std::vector<Spec> specs_;
  std::map<std::string, std::string> aliases_;  // short name → option name
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> positionals_;
};

// Shows "stage 42% ..." on stderr when it is a terminal and the work takes a while (or sends it to
// the file descriptor $CHAKRA_PROGRESS_FD names, as lines "STAGE\tDONE\tTOTAL": the Python
// module's runs); asks the work to stop after Ctrl-C.
class TerminalProgress : public chakra::Progress {
 public:
  TerminalProgress();
  ~TerminalProgress() override;
  bool report(std::string_view stage, uint64_t done, uint64_t total) override;
  void clear();

 private:
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

// On virtual machines the first touch of each 4 KiB page costs several microseconds: a quarter
// of a conversion's time went there. A 2 MiB transparent huge page costs about as much as a few
// of them. Columns map their large blocks in huge pages themselves; this puts the malloc heap
// (strings, vectors, small columns) on them too. glibc is told to grow the heap 64 MiB at a time
// and to serve blocks of up to 32 MiB from it (not from fresh mappings); the heap is grown once
// now and that stretch is marked for huge pages. Only a hint: without THP nothing changes.
// chakra does it before commands that build whole traces, the Python module around a read, which
// then puts glibc's thresholds back (default_heap_thresholds).
void back_heap_with_huge_pages();
void default_heap_thresholds();
// The blocks glibc maps for large allocations (and its heap as it grows) come in 4 KiB pages
// unless the tunable glibc.malloc.hugetlb=1 is set, which glibc reads only at start: reading a
// 1.5 GB Kineto trace spent half its CPU time faulting those pages in. So the commands that
// build whole traces start themselves again once with it (GLIBC_TUNABLES; `argv` is main's).
// Where the tunable is already set, or exec fails, nothing happens.
void reexec_with_huge_page_malloc(char** argv);

// Installs the Ctrl-C handler: the first press asks running work to stop (outputs are not left
// half-written), a second one kills the process.
void install_interrupt_handler();
bool interrupted();

// .et files written one after another and published together by commit(), so a failure or
// Ctrl-C part way leaves none of them behind.
class EtFileSet {
 public:
  void add(const std::string& path, const chakra::Trace& trace);
  void commit();

 private:
  std::vector<std::unique_ptr<chakra::OutputFile>> files_;
};

// Reader options shared by commands that read .et files ("--metadata auto|present|absent").
void add_read_options(Args& args);
chakra::ReadOptions read_options(const Args& args, chakra::Progress* progress);

// Runs job(i) for every i < n on up to one thread per core. A chakra::Error thrown by a job is
// kept and no further job starts; once the running ones ended, the first error (in index
// order) is rethrown, so callers publish their outputs only when every job succeeded. With a
// `progress_stage`, the share of jobs done is shown on a terminal. `threads`: 0 for every core.
void run_jobs(size_t n, const std::function<void(size_t)>& job, std::string_view progress_stage = {},
              size_t threads = 0);

// Creates the folder an output path (or PREFIX of per-rank outputs) lies in, if it has one;
// chakra::Error naming the folder when that fails.
void create_output_folder(const std::string& path);
// Checks, before long work, that an output can be written there: the folder `path` lies in
// exists and is writable (with `folder_made`: its nearest existing ancestor, where
// create_output_folder will make it), and `path` is no folder. chakra::Error naming `path` and
// `option` (the flag that gave it) otherwise; "-" (standard output) passes.
void check_output_path(const std::string& path, const std::string& option, bool folder_made = false);

// Writes PREFIX.{i}.et for every i < count, filled by build(i, trace) in parallel (one Trace per
// thread), and the comm-group JSON at `groups_path` (none when empty); creates PREFIX's folder. Nothing is
// published unless every file was written.
void write_rank_traces(const std::string& prefix, size_t count,
                       const std::function<void(size_t, chakra::Trace&)>& build, const std::string& groups_path,
                       const std::map<std::string, std::vector<int64_t>>& groups);

// The first `bytes` bytes of a file, inflated when it is gzip: enough to tell what it is.
std::string read_head(const std::string& path, size_t bytes = 65536);

// What a JSON file of a PyTorch run is, from its first bytes: a host ET (or linked trace), a
// Kineto trace (and the rank it states, when it states one; one its name contradicts is a
// chakra::Error), or neither.
enum class RunFile { Host, Kineto, Other };
RunFile sniff_run_file(const std::string& path, std::optional<uint32_t>* stated_rank = nullptr);

// A PyTorch run's rank pairs in a folder (chakra link DIR, chakra anonymize DIR), by rank: a
// sub-folder per rank holding one host ET and one Kineto trace, or files in the folder itself.
// A pair's rank is the one its Kineto trace states, else the number in the sub-folder's or the
// files' names. Host ETs without a Kineto trace in their folder are not pairs. Files named like
// this run's outputs (`output_stem`.N.json[.gz], from an earlier run into the same folder) are
// not inputs (none when it is empty). chakra::Error for ranks it cannot tell or finds twice,
// and for no pair at all.
struct RankPair {
  std::string host, device;
  int64_t rank = 0;
  const char* rank_from = "";           // the evidence: "the Kineto trace's distributedInfo", "the folder's name", ...
  std::optional<uint32_t> folder_rank;  // the number in a rank folder's name, checked when linking
};
std::vector<RankPair> find_rank_pairs(const std::string& dir, const std::string& output_stem);

// What the file at `path` is (chakra::describe_input over its first bytes, inflated when gzip).
chakra::InputDescription describe_file(const std::string& path);

// Refuses a file that is not a Chakra .et trace with a chakra::Error naming it and saying what
// it is (chakra::describe_input): configs, PyTorch and Chakra JSON, text workloads, images,
// archives, text. Binary data of no known kind passes: the .et reader says where it fails.
// `reads` ends the message ("chakra info reads Chakra .et traces").
void require_chakra_et(const std::string& path, const std::string& reads);

// Each FILE, and every file under each folder (hidden ones aside), a folder's files in name
// order; a path that is neither is a chakra::Error.
std::vector<std::string> files_under(const std::vector<std::string>& paths);

// --shard i/K of the commands that take a folder of ranks: this process does the ranks r with
// r mod K == i (sweeps number points the same way).
void add_shard_option(Args& args);
std::optional<chakra::sweep::Shard> shard_option(const Args& args);

// The traces PATHs name for the per-trace commands (info, validate): each FILE as given, and a
// folder's .et and .et.gz files (not in sub-folders) in rank order (the number in the name,
// chakra::rank_from_file_name; then name). With `shard`, only the ranks r mod K == i, and a
// file whose name holds no rank is a chakra::Error.
// `json_too`: a folder's .json and .json.gz traces as well (process-group files aside).
std::vector<std::string> trace_files(const std::vector<std::string>& paths,
                                     const std::optional<chakra::sweep::Shard>& shard, bool json_too = false);

// `chakra info merge` / `chakra validate merge`: the outputs of a command's shards (run with
// --shard i/K, the same options, stdout saved to PART files) joined into what one unsharded run
// prints: their per-file records ordered by the rank in each record's file name. A record is a
// top-level element of the JSON array (--json; its "file" names the trace) or, in text, a line
// that does not start with a space and the indented lines under it (`path_of_first_line` finds
// the trace's path in that line); text records are joined with `text_separator`. `failed` tells
// whether a record reports a failure. Throws chakra::Error naming the part for anything else.
struct JoinedShards {
  std::string output;
  bool any_failed = false;
};
JoinedShards join_shard_outputs(const std::vector<std::string>& parts, std::string_view text_separator,
                                const std::function<std::string(std::string_view first_line)>& path_of_first_line,
                                const std::function<bool(std::string_view record, bool json)>& failed);

// A collective named as the commands take it (all_reduce, ALL_GATHER, ...: any case); a usage
// error naming `option` and listing the names otherwise.
inline chakra::CommType collective_option(const Args& args, const std::string& option, std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::optional<int32_t> t = chakra::parse_comm_type(upper);
  if (!t)
    args.fail(option + ": unknown collective '" + std::string(name) +
              "' (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, scatter, barrier, "
              "reduce_scatter_block)");
  return static_cast<chakra::CommType>(*t);
}

// --what-if NAME=K: ops whose name contains NAME run K (> 0) times faster.
struct WhatIf {
  std::string name_part;
  double speedup = 1;
};
WhatIf parse_what_if(const Args& args, const std::string& spec);

// The path of this executable (for scripts that run it again), a string quoted for the shell,
// and a command's standard output (trimmed; chakra::Error with its output when it fails).
std::string self_path();
std::string shell_quote(const std::string& s);
std::string run_command(const std::vector<std::string>& argv);

// --slurm: a command done in shards as a Slurm array, then a gather job once all succeeded.
struct SlurmJobs {
  std::string name;            // job name ("chakra-sweep"); the gather job adds "-gather"
  std::string dir;             // where the scripts and logs go
  uint32_t tasks = 1;          // array tasks; $SLURM_ARRAY_TASK_ID is 0..tasks-1
  std::string array_command;   // shell words run by each task
  std::string gather_command;  // shell words of the gather job
  std::string result;          // where the result will be, said once submitted
};
// --slurm, --array-size, --partition, --time, --dry-run; `units` names what is shared out.
void add_slurm_options(Args& args, const std::string& units);
// The array's tasks: --array-size, else `units` up to 16.
uint32_t slurm_tasks(const Args& args, uint64_t units);
// Writes DIR/array.sh and DIR/gather.sh and submits them with sbatch (the gather with
// --dependency=afterok on the array), printing the job ids; with --dry-run prints them instead.
int submit_slurm(const Args& args, const SlurmJobs& jobs);

// -o FILE for commands that print their result: while alive, what goes to std::cout is kept, and
// commit() writes it to FILE whole (a temporary renamed into place). Without commit (an error, an
// interrupt) FILE is left as it was. With an empty path, std::cout is left alone.
class StdoutTo {
 public:
  explicit StdoutTo(std::string path);
  ~StdoutTo();
  StdoutTo(const StdoutTo&) = delete;
  StdoutTo& operator=(const StdoutTo&) = delete;
  void commit();

 private:
  std::string path_;
  std::ostringstream kept_;
  std::streambuf* previous_ = nullptr;
};

// Runs a command body, turning chakra::Error into "chakra <cmd>: message" and exit 1, and
// chakra::Cancelled into exit 130.
int run_guarded(const std::string& prog, int (*body)(const Args&), const Args& args);

}  // namespace cli
