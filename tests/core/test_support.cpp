#include "test_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "chakra/format/io.h"
#include "chakra/support/error.h"

namespace fs = std::filesystem;

namespace testing_support {

bool shared_data_missing_in_test = false;

std::string shared_dir_path() {
  const char* env = std::getenv("CHAKRA_SHARED_DIR");
  return env && *env ? env : CHAKRA_SHARED_DIR;
}

const std::string& shared_dir() {
  static const std::string dir = shared_dir_path();
  static const bool present = fs::is_directory(dir + "/reference") && fs::is_directory(dir + "/data");
  if (!present) {
    shared_data_missing_in_test = true;
    throw SharedDataMissing{};
  }
  return dir;
}

std::string shared(const std::string& relative) { return shared_dir() + "/" + relative; }
std::string test_data(const std::string& relative) { return std::string(CHAKRA_TEST_DATA) + "/" + relative; }

std::vector<std::string> find_files(const std::string& dir, const std::vector<std::string>& suffixes) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string p = entry.path().string();
    for (const auto& s : suffixes)
      if (chakra::ends_with(p, s)) {
        out.push_back(p);
        break;
      }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> all_shared_traces() {
  std::vector<std::string> out;
  for (const char* d : {"data", "reference"}) {
    auto f = find_files(shared(d), {".et", ".et.gz", ".eg"});
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

std::string read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_decompressed(const std::string& path) { return chakra::read_file(path); }

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

chakra::Trace decode(const std::string& bytes, const std::string& name, const chakra::ReadOptions& options) {
  return chakra::read_et(chakra::memory_input(as_bytes(bytes), name, options.input), options);
}

std::string temp_dir() {
  static int counter = 0;
  // The process's folder of them goes when it ends with every test passed; a failure's files
  // stay, as its messages name them (repeated runs filled /tmp by tens of GB).
  static struct Root {
    fs::path path = fs::temp_directory_path() / ("chakrakit-test-" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      if (::testing::UnitTest::GetInstance()->Passed()) fs::remove_all(path, ec);
    }
  } root;
  const fs::path& base = root.path;
  fs::path dir = base / std::to_string(counter++);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::vector<double> csv_numbers(const std::string& path, const std::string& first_field) {
  const std::string text = read_raw(path);
  const std::string start = first_field + ",";
  std::vector<double> out;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, start.size(), start) == 0) {
      std::string line = text.substr(at, end - at) + ",";
      for (size_t p = 0, comma; (comma = line.find(',', p)) != std::string::npos; p = comma + 1)
        out.push_back(std::stod(line.substr(p, comma - p)));
      return out;
    }
    at = end + 1;
  }
  return out;
}

StalledRank stalled_rank(bool allocator, int rank) {
  struct Op {
    int id;
    const char* name;
    double ts, dur;
  };
  const std::vector<Op> ops = {{3, "aten::mm", 100, 20},       {4, "aten::empty", 200, 3},   {5, "aten::empty", 210, 3},
                               {6, "aten::empty", 220, 3},     {7, "aten::empty", 230, 3},   {8, "aten::empty", 240, 3},
                               {9, "aten::empty", 300, 19950}, {10, "aten::relu", 20300, 10}};
  auto host_node = [](int id, const std::string& name, int parent, int rf) {
    return "{\"id\": " + std::to_string(id) + ", \"name\": \"" + name + "\", \"ctrl_deps\": " + std::to_string(parent) +
           ", \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": [], \"shapes\": "
           "[], "
           "\"types\": []}, \"attrs\": [{\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": " +
           std::to_string(rf) + "}, {\"name\": \"tid\", \"type\": \"uint64\", \"value\": 1}]}";
  };
  StalledRank r;
  r.host = "{\"schema\": \"1.1.0-chakra.0.0.4\", \"pid\": 7, \"time\": \"2026-11-28\", \"start_ts\": 1, \"nodes\": [" +
           host_node(1, "[pytorch|profiler|execution_trace|process]", 1, 0) + ", " +
           host_node(2, "[pytorch|profiler|execution_trace|thread]", 1, 0);
  for (const Op& op : ops) r.host += ", " + host_node(op.id, op.name, 2, op.id);
  r.host += "], \"finish_ts\": 99}";
  auto event = [](const char* cat, const std::string& name, double ts, double dur, int tid, const std::string& args) {
    char times[64];
    std::snprintf(times, sizeof times, "\"ts\": %.1f, \"dur\": %.1f", ts, dur);
    return std::string("{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" + name +
           "\", \"pid\": 7, \"tid\": " + std::to_string(tid) + ", " + times + ", \"args\": {" + args + "}}";
  };
  r.kineto = "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) +
             ", \"world_size\": 2}, \"traceEvents\": [" +
             event("user_annotation", "ProfilerStep#1", 50, 20300, 1, "\"External id\": 100");
  for (const Op& op : ops)
    r.kineto += ", " + event("cpu_op", op.name, op.ts, op.dur, 1,
                             "\"External id\": " + std::to_string(op.id) +
                                 ", \"Record function id\": " + std::to_string(op.id));
  auto launch = [&](double ts, int external, int correlation, const char* kernel, double start, double dur) {
    r.kineto += ", " + event("cuda_runtime", "cudaLaunchKernel", ts, 4, 1,
                             "\"External id\": " + std::to_string(external) +
                                 ", \"correlation\": " + std::to_string(correlation));
    r.kineto += ", " + event("kernel", kernel, start, dur, 7,
                             "\"External id\": " + std::to_string(external) + ", \"correlation\": " +
                                 std::to_string(correlation) + ", \"stream\": 7, \"device\": 0");
  };
  launch(105, 3, 500, "sm80_xmma_gemm_f16f16_f32", 130, 20000);
  launch(20302, 10, 501, "relu_kernel", 20320, 10);
  if (allocator) r.kineto += ", " + event("cuda_runtime", "cudaFree", 310, 19930, 1, "\"correlation\": 502");
  r.kineto += "]}";
  return r;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const chakra::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace testing_support
