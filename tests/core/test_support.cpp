#include "test_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "chakra/format/io.h"

namespace fs = std::filesystem;

namespace testing_support {

const std::string& shared_dir() {
  static const std::string dir = [] {
    std::string d = CHAKRA_SHARED_DIR;
    if (!fs::is_directory(d + "/reference") || !fs::is_directory(d + "/data")) {
      std::fprintf(stderr,
                   "FATAL: the reference data directory %s is missing (expected ../shared next to the "
                   "checkout, or set -DCHAKRA_SHARED_DIR=...). Tests need it and do not skip.\n",
                   d.c_str());
      std::exit(1);
    }
    return d;
  }();
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
  fs::path base = fs::temp_directory_path() / ("chakrakit-test-" + std::to_string(::getpid()));
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

}  // namespace testing_support
