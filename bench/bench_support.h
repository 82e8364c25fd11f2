// What chakra_bench's parts share: timing child processes, the reference timings table, and
// the replicated inputs (the reference timings' resnet_xN traces).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chakra/trace/trace.h"

namespace bench {

// One child process: wall and CPU seconds (user + system, from the kernel) and peak RSS.
struct ChildRun {
  double wall_s = 0, cpu_s = 0, user_s = 0;
  uint64_t max_rss_bytes = 0;
  int exit_code = -1;
};
// Runs argv[0] (a path) with stdout and stderr discarded, in `cwd` when given. After
// start_spawner(), children are started by a small process forked then, so their peak RSS does
// not include this process's memory (call it first thing in main).
ChildRun run_child(const std::vector<std::string>& argv, const std::string& cwd = "");
void start_spawner();

// Column `column` (1 wall, 2 CPU seconds, 3 peak RSS KB) of the row `label` of
// ../shared/reference/chakra/timings.tsv, or 0.
double reference_timing(const std::string& label, int column);
inline double reference_cpu_seconds(const std::string& label) { return reference_timing(label, 2); }
inline double reference_rss_kb(const std::string& label) { return reference_timing(label, 3); }

// `copies` copies of an .et trace's nodes in one trace, ids (and dependencies) shifted per copy.
chakra::Trace replicate(const std::string& input, int copies);
// The linked ResNet rank's JSON `copies` times (ids, parents, inter-thread dependencies
// shifted), as the reference timings' resnet_xN inputs.
void write_replicated_linked_json(const std::string& input, int copies, const std::string& path);
// The ResNet host ET and its Kineto trace `copies` times: every copy's nodes hang under the one
// process root (node 1), as the reference links them; rf_ids, Kineto times, External ids,
// Record function ids and correlations shifted per copy. Returns the Kineto events written.
uint64_t write_replicated_link_inputs(const std::string& host_in, const std::string& kineto_in, int copies,
                                      const std::string& host_out, const std::string& kineto_out);

// A Kineto trace of at least `min_bytes`: `input`'s events repeated, each copy's times past the
// previous copy's end and its ids (External id, correlation, Record function id, flow ids) past
// the largest; distributedInfo's rank set to `rank`. Written as it is made. Returns the bytes.
uint64_t write_replicated_kineto(const std::string& input, uint64_t min_bytes, uint32_t rank, const std::string& path);

// The processor's model name (/proc/cpuinfo), for reports.
std::string cpu_model();

// The median of `v` (the mean of the middle two for an even count; NaN when empty).
double median(std::vector<double> v);

}  // namespace bench
