// Files dropped on the web app: the first byte picks the file name (which, with the content,
// decides the kind), the rest is the file; it is opened in small steps as the page does.
#include "chakra/app/workspace.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kNames[] = {"trace.0.et", "trace.1.et.gz", "rank0_et.json", "rank0_kineto.json",
                                 "workload.txt", "network.yml", "system.json", "comm_group.json"};
  std::string name = kNames[data[0] % 8];
  fuzz_support::expect_clean([&] {
    chakra::Workspace ws;
    ws.set_text_npus(4);
    auto loading = ws.begin(fuzz_support::bytes(data + 1, size - 1), name);
    while (!loading->step(64)) {
    }
    ws.finish(*loading);
  });
  return 0;
}
