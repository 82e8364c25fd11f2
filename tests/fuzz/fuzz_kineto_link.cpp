// Kineto trace JSON linked against a small valid host ET (chakra link): the fuzzed input is the
// device side; when it contains "\n@@host@@\n", the part before is the host ET instead.
#include "chakra/format/io.h"
#include "chakra/pytorch/trace_link.h"
#include "fuzz_support.h"

namespace {
const char kHost[] = R"json({"schema": "1.0.1", "pid": 1, "time": "2024-01-01", "start_ts": 1, "finish_ts": 9,
 "nodes": [
  {"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1, "inputs": {"values": [], "shapes": [], "types": []},
   "outputs": {"values": [], "shapes": [], "types": []}, "attrs": [{"name": "rf_id", "type": "uint64", "value": 0}]},
  {"id": 2, "name": "aten::mm", "ctrl_deps": 1, "inputs": {"values": [[1,2,0,4,4,"cuda:0"]], "shapes": [[2,2]], "types": ["Tensor(float)"]},
   "outputs": {"values": [[3,4,0,4,4,"cuda:0"]], "shapes": [[2,2]], "types": ["Tensor(float)"]},
   "attrs": [{"name": "rf_id", "type": "uint64", "value": 1}, {"name": "tid", "type": "uint64", "value": 1}]}
 ]})json";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = fuzz_support::text(data, size), host = kHost, device = input;
  size_t split = input.find("\n@@host@@\n");
  if (split != std::string_view::npos) {
    host = input.substr(0, split);
    device = input.substr(split + 10);
  }
  fuzz_support::expect_clean([&] {
    chakra::StringSink out;
    chakra::link_traces(
        chakra::memory_input({reinterpret_cast<const uint8_t*>(host.data()), host.size()}, "fuzz_host.json"),
        chakra::memory_input({reinterpret_cast<const uint8_t*>(device.data()), device.size()}, "fuzz_kineto.json"),
        out);
  });
  return 0;
}
