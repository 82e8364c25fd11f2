// What the command-line suites share: running the chakra binary as a user would.
#pragma once

#include <string>
#include <vector>

namespace cli_testing {

// A file under assets/ of the source tree.
std::string assets(const std::string& relative);

struct Result {
  int exit_code;
  std::string out, err;
};

// Runs the chakra binary (or one of its alias links) with `args`, in `cwd` if given.
Result run(const std::vector<std::string>& args, const std::string& program = CHAKRA_BIN, const std::string& cwd = "");

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace cli_testing
