// A simulation as bytes: everything sim::simulate needs, and everything it returns, packed so a
// run can happen where memory is not shared with the caller (a Web Worker, another process) and
// be cancelled by stopping that worker. The format is private to one build of chakrakit (both
// ends are the same version); decoding checks every length and count against the bytes, so a
// damaged buffer is an error, never an out-of-bounds read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chakra/sim/simulate.h"

namespace chakra {

struct SimJob {
  std::vector<std::string> traces;  // encoded .et bytes, one per NPU in NPU order
  astra::NetworkConfig network;
  astra::SystemConfig system;
  astra::RemoteMemoryConfig memory;
  astra::CommGroups groups;
  sim::SimOptions options;  // `progress` is not carried; run_job takes its own
};

std::string encode_job(const SimJob& job);
SimJob decode_job(std::string_view bytes);  // throws chakra::Error ("simulation job: ...")

std::string encode_result(const sim::SimResult& result);
sim::SimResult decode_result(std::string_view bytes);  // throws chakra::Error ("simulation result: ...")

// Runs the job; `progress` (may be null) replaces options.progress.
sim::SimResult run_job(const SimJob& job, Progress* progress = nullptr);

}  // namespace chakra
