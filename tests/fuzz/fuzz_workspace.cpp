// Files dropped on the web app: the first byte picks the file name (which, with the content,
// decides the kind) and, in its high bits, whether the file is handed over whole or in pieces
// (of 1 to 8 bytes, steps between them, as the page's slices); the rest is the file. It is
// opened in small steps as the page does.
#include "chakra/app/workspace.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kNames[] = {"trace.0.et",   "trace.1.et.gz", "rank0_et.json", "rank0_kineto.json",
                                 "workload.txt", "network.yml",   "system.json",   "comm_group.json"};
  std::string name = kNames[data[0] % 8];
  fuzz_support::expect_clean([&] {
    chakra::Workspace ws;
    ws.set_text_npus(4);
    const auto file = fuzz_support::bytes(data + 1, size - 1);
    const size_t piece = data[0] >> 5;  // 0: whole
    std::unique_ptr<chakra::Workspace::Loading> loading;
    if (piece == 0) {
      loading = ws.begin(file, name);
    } else {
      loading = ws.begin_pieces(name, file.size());
      for (size_t at = 0; at < file.size(); at += piece) {
        loading->add_bytes(file.subspan(at, std::min(piece, file.size() - at)));
        loading->step(4);
      }
    }
    while (!loading->step(64)) {}
    ws.finish(*loading);
    for (const chakra::RankConversion& job : ws.take_conversions()) {  // a PyTorch file: as the page's worker does
      try {
        ws.finish(*ws.begin_converted(chakra::decode_converted(chakra::encode_converted(chakra::convert_rank(job)))));
      } catch (const chakra::Error&) {
        ws.conversion_failed(job.rank, job.generation);
        throw;
      }
    }
  });
  return 0;
}
