// The benchmark suite (`chakra suite`, core/docs/suite.md): a versioned definition of workloads
// by class, each at fixed scales with its parallelism fixed per scale by the suite and
// regenerated from the definition (a content hash per workload and scale). A submitted system
// (a network and a system configuration, ASTRA-sim's formats) runs every workload × scale through
// the sweep engine; each is scored as the speed-up of its step over the suite's reference system,
// then per workload, per class and overall as geometric means.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/app/sweep.h"

namespace chakra::suite {

using Json = sweep::Json;

struct Workload {
  std::string name, klass;
  Json base;                       // a sweep workload ({synth: {...}}, ...)
  std::map<uint32_t, Json> scale;  // NPUs -> what the suite sets at that scale, merged into base
};

struct Suite {
  std::string version;  // "chakra-suite-v1"
  std::string source, base_dir;
  Json reference;  // {preset: NAME} or {network: NET.yml, system: SYS.json}
  std::vector<Workload> workloads;
  std::string text;  // the definition as read
  std::string hash;  // SHA-256 of the definition's text
};

// Reads a definition (YAML). Throws chakra::Error naming `source` and what is wrong: an unknown
// key, a workload without scales, a scale that is not a number of NPUs, a name used twice.
Suite parse_suite(std::string_view yaml, const std::string& source, const std::string& base_dir);
Suite load_suite(const std::string& path);
// The suite this build carries (assets/suite/chakra-suite-v1.yaml, compiled in), its paths (the
// measured runs it projects, ../examples/NAME) relative to `base_dir`: where its definition is
// installed (share/chakrakit/suite) or assets/suite in a source tree.
Suite builtin_suite(const std::string& base_dir);
// That folder for a program in `exe_dir`: share/chakrakit/suite beside it when installed there,
// else `source_assets`/suite (a build tree).
std::string builtin_suite_dir(const std::string& exe_dir, const std::string& source_assets);

// One workload at one scale: its sweep workload (base with the scale's settings) and the
// SHA-256 of that configuration, so a changed definition changes the hash.
struct Entry {
  std::string workload, klass;
  uint32_t npus = 0;
  Json config;
  std::string hash;
};
std::vector<Entry> entries(const Suite& suite);

// The measured run an entry projects (a `project` workload), nullopt for others: its folder and
// "" when its files are there with the content the definition names, else what is wrong.
struct MeasuredRun {
  std::string folder, problem;
};
std::optional<MeasuredRun> measured_run(const Suite& suite, const Entry& entry);
// Only its folder, nothing read (what a host provides to the workers that run the entry).
std::optional<std::string> measured_run_folder(const Suite& suite, const Entry& entry);

// A system the suite runs on: its network (ASTRA-sim's analytical YAML; fitted to each scale's
// NPUs, chakra::fit_network) and its system JSON (its compute model: peak-perf, local-mem-bw),
// as text: what a result records and verify runs again.
struct System {
  std::string name, network, system;
};
// A system from files, or from a cluster preset's configuration.
System system_from_files(const std::string& name, const std::string& network_yml, const std::string& system_json);
System system_from_preset(const std::string& preset);
// The suite's reference system.
System reference_system(const Suite& suite);

// The sweep that runs every entry on each system: system k's entry i is point k × entries + i.
// Synthesized workloads run on the system's roofline compute model; measured runs (project) keep
// their measured compute times.
sweep::Spec spec_for(const Suite& suite, const std::vector<System>& systems);

// One entry on each system, for hosts that run entries elsewhere (the page's workers): the
// definition, its folder, the systems and the entry's index, as one JSON text; then run there,
// giving the entry's row on each system in order. The workload is built once for all systems.
// run_entry_job throws chakra::Error for a job that is not one (a failed simulation is a row
// with its error, as in a sweep).
std::string entry_job(const Suite& suite, const std::vector<System>& systems, size_t entry);
std::vector<sweep::Row> run_entry_job(std::string_view job);

// A shard of a run (chakra suite run --shard i/K, one Slurm array task): the rows of the entries
// whose index is i mod K, on the system and on the reference (each in entry order), with what
// merge_parts checks them by (the suite's hash, the system, the shard).
Json shard_part(const Suite& suite, const System& system, sweep::Shard shard, const std::vector<sweep::Row>& rows,
                const std::vector<sweep::Row>& reference_rows);
// The parts of every shard of one run joined into its result, the same bytes as one run writes.
// chakra::Error naming the part of another suite definition or system, a shard given twice or
// missing, or rows that are not the shard's.
Json merge_parts(const Suite& suite, const std::vector<std::string>& texts, const std::vector<std::string>& sources);

// The result of a run: per entry its step on the system and on the reference and the score
// (reference / system), the exposed-communication share, the network's utilisation per
// dimension (busy time over step × NPUs); per workload, class and overall the
// geometric mean of the scores; the suite's version and hash, every entry's hash, the system's
// configuration and its hash, the tool's version. `rows` and `reference_rows` are the sweeps'
// rows in entry order. Throws chakra::Error when an entry failed (its error named).
Json result(const Suite& suite, const System& system, const std::vector<sweep::Row>& rows,
            const std::vector<sweep::Row>& reference_rows);

// A result as chakra suite run writes it, every field the views and the board read checked;
// chakra::Error naming `source` and what is missing otherwise.
Json read_result(std::string_view text, const std::string& source);
Json checked_result(Json result, const std::string& source);  // the same on parsed JSON

// The system a result was run on, from what it records. chakra::Error when it is no result.
System recorded_system(const Json& result, const std::string& source);

// What differs between a result and the same run again: the first field whose value differs
// (a path such as "entries[3].step_ns", both values), or "" when none does.
std::string first_difference(const Json& claimed, const Json& rerun, const std::string& path = "");

// The result as a table for a terminal; an entry's network utilisation per dimension as text
// ("12.0% / 80.5%").
std::string result_text(const Json& result);
std::string network_utilisation_text(const Json& entry);

// A leaderboard of results of one suite (chakra::Error naming the file of a result of another
// suite version or definition, or a system twice): ranked by overall score, with per-class
// scores, as CSV, Markdown and a self-contained HTML page. `sources` name the results.
struct Board {
  std::vector<Json> results;  // best first
  std::vector<std::string> sources;
  std::vector<std::string> classes;
};
Board make_board(const std::vector<Json>& results, const std::vector<std::string>& sources);
std::string board_csv(const Board& board);
std::string board_markdown(const Board& board);
std::string board_html(const Board& board);
// The board as JSON (BOARD.json: "suite_board" first, then its results whole, best first), and
// read back: each result checked as read_result checks it, all of one suite; chakra::Error
// naming `source` (and the result) otherwise. The page opens a board as its results.
std::string board_json(const Board& board);
Board read_board(std::string_view text, const std::string& source);

}  // namespace chakra::suite
