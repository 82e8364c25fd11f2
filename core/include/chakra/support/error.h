// Errors raised by the core. Messages are complete sentences meant for the user: they name the
// file (or input) and what is wrong with it, e.g. "trace.et: byte 1042: record length 9000
// exceeds the 120 bytes left in the file (truncated?)".
#pragma once

#include <stdexcept>
#include <string>

namespace chakra {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised when a Progress callback asked to stop (e.g. the user pressed Ctrl-C).
class Cancelled : public Error {
 public:
  Cancelled() : Error("interrupted") {}
};

}  // namespace chakra
