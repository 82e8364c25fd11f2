// What a simulation's result looks like to people and to other tools: ASTRA-sim's per-NPU
// lines, a human summary, a JSON document of every per-NPU figure and total, and a
// Chrome/Perfetto trace of every node that ran (SimOptions::record_spans).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "chakra/format/io.h"
#include "chakra/format/json_writer.h"
#include "chakra/sim/simulate.h"
#include "chakra/trace/trace.h"

namespace chakra {

// "sys[N] finished, T cycles, exposed communication E cycles." for each finished NPU, in the
// order they finished (ties: NPU order), as ASTRA-sim prints them.
std::string astra_finish_lines(const sim::SimResult& r);

// The makespan (the first NPU's start to the last NPU's finish), each NPU's own step (its finish
// less its start: the shortest, longest and mean), mean busy times over finished NPUs, exposed
// communication (communication while no compute runs) apart from ASTRA-sim's figure (step less
// compute, here "non-compute"), a line when the longest-step NPU's CPU ops fill at least 95% of
// its step (qualified when host stalls are among them), the host stalls per NPU and class with
// what the other --stalls mode gives, and per collective type its count, bytes and mean time;
// begins with an empty line. Traces with measured times add measured_vs_simulated_text.
std::string sim_summary_text(const sim::SimResult& r);

// For NPUs whose traces carry measured times: the mean |error| and worst NPU of the simulated
// step against the measured one over the whole trace, a line per NPU (up to 64 NPUs) with the
// exposed communication and transfer measured and simulated; the same for each ProfilerStep#N
// window; per collective type the median measured against the median simulated duration.
// Empty without measured times; a line saying why for traces whose times are derived.
std::string measured_vs_simulated_text(const sim::SimResult& r);
// How far `simulated` is from `measured`, in percent of it (+ means longer); 0 when nothing
// was measured.
double percent_off(sim::Tick simulated, sim::Tick measured);

// A simulated NPU's step split four ways, for charts: GPU compute alone, compute overlapped by
// communication, communication alone (exposed), and neither (idle: CPU work or waiting). They
// add up to the step (finish − start), from the unions of its busy intervals.
struct NpuTimeSplit {
  sim::Tick compute_only = 0, overlapped = 0, comm_only = 0, idle = 0;
};
NpuTimeSplit time_split(const sim::NpuResult& n);

// {"end_ns" (= "makespan_ns"), "deadlock", "messages", "events", "stall_mode", "npus": [{finished,
//  finish_ns, start_ns, step_ns, non_compute_ns, exposed_communication_ns, ...}], "collectives":
//  {"all_reduce": {count, bytes, time_ns}, ...}} and a newline; with measured times, each NPU also
// has "measured_step_ns", the measured and simulated exposed figures and "profiler_steps", and the
// document "measured_collectives": [{comm_type, count, measured_median_ns, simulated_median_ns}];
// with host stalls "stalls_ns" per NPU and "other_stall_mode".
// `more` adds keys of the caller's at the object's end (chakra simulate's what-if run).
void write_sim_json(const sim::SimResult& r, ByteSink& out, const std::function<void(JsonWriter&)>& more = {});
// The same object (no newline) as a value of the JSON being written: the page's status has it.
void write_sim_json(const sim::SimResult& r, JsonWriter& w, const std::function<void(JsonWriter&)>& more = {});

// Writes NPU `npu`'s simulated times into its trace: each node that ran gets start_time_micros
// origin_micros + its start and duration_micros its duration, rounded to the microsecond (the
// schema's unit); nodes that never ran get start 0 (no time recorded). `origin_micros` (> 0, as 0
// means "no time") is where simulated time 0 lands: for replays of measured traces, the
// earliest rank's measured start, so that both sets of times share a clock.
void set_simulated_times(Trace& trace, std::span<const sim::Span> spans, uint32_t npu, uint64_t origin_micros);

// The network's load: per dimension messages, bytes, busy time and that time's share of the run
// per NPU (busy / (NPUs × the run's end)); for the congestion-aware backend the `top_links`
// busiest links with their share of the run and the time messages queued for them. Part of
// sim_summary_text.
std::string network_load_text(const sim::SimResult& r, size_t top_links);
double dimension_utilisation(const sim::SimResult& r, size_t dim);
// "NPU 3", or for the congestion-aware network's switches (devices past the NPUs) "switch 0".
std::string device_name(const sim::SimResult& r, uint32_t device);

// One process per NPU with a thread per span kind (compute, cpu, collectives, sends,
// receives, memory, other), a complete event per span (microseconds), its node id in args.
void write_sim_chrome_trace(const sim::SimResult& r, ByteSink& out);

}  // namespace chakra
