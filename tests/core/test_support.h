// Helpers shared by the test suites: where the reference data lives, file listing, bytes.
#pragma once

#include <cstdint>
#include <span>
#include <functional>
#include <string>
#include <vector>

#include "chakra/format/et_io.h"

namespace testing_support {

// ../shared (reference traces and outputs). Where it is missing, throws SharedDataMissing after
// setting shared_data_missing_in_test: test_main.cpp counts the test as not run (and fails the
// run when CHAKRA_REQUIRE_SHARED=1), never as passed.
struct SharedDataMissing {};
extern bool shared_data_missing_in_test;
const std::string& shared_dir();
// Where the data is looked for (CHAKRA_SHARED_DIR at run time, else the build's setting).
std::string shared_dir_path();
std::string shared(const std::string& relative);
// tests/data (small fixtures committed with the project).
std::string test_data(const std::string& relative);

// Files under `dir` (recursively) whose names end with one of `suffixes`, sorted.
std::vector<std::string> find_files(const std::string& dir, const std::vector<std::string>& suffixes);
// Every Chakra trace in the shared corpus: *.et, *.et.gz, *.eg under data/ and reference/.
std::vector<std::string> all_shared_traces();

std::string read_raw(const std::string& path);           // bytes as stored
std::string read_decompressed(const std::string& path);  // gunzipped if gzip
void write_raw(const std::string& path, const std::string& bytes);
// The fields of the first line of a CSV file (no quoting) that starts with `first_field` and a
// comma, as numbers; empty when there is none.
std::vector<double> csv_numbers(const std::string& path, const std::string& first_field);

inline std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
chakra::Trace decode(const std::string& bytes, const std::string& name = "test.et",
                     const chakra::ReadOptions& options = {});

// A fresh empty directory for the calling test.
std::string temp_dir();

// The message of the chakra::Error `f` throws; empty if it throws none.
std::string error_of(const std::function<void()>& f);

// A crafted one-rank PyTorch run with a host stall, as Megatron-LM runs show them: aten::mm
// launches a 20 ms GEMM (130–20130 µs); five aten::empty of 3 µs; a sixth aten::empty from 300
// to 20250 µs, which ends 120 µs after the GEMM ends, the device idle between; aten::relu then
// launches a kernel at 20320. The host ET and the Kineto trace (with a ProfilerStep#1 around
// it all); `allocator`: a cudaFree call fills the stall. The Kineto trace states `rank`.
struct StalledRank {
  std::string host, kineto;
};
StalledRank stalled_rank(bool allocator = false, int rank = 0);

}  // namespace testing_support
