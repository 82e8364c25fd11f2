// Progress reporting and cancellation for long operations.
#pragma once

#include <cstdint>
#include <string_view>

#include "chakra/support/error.h"

namespace chakra {

class Progress {
 public:
  virtual ~Progress() = default;
  // Called now and then from the working thread with the amount of work done so far
  // (`total` is 0 when unknown). Returning false asks the operation to stop: it then throws
  // chakra::Cancelled after releasing what it holds (temporary output files are removed).
  virtual bool report(std::string_view stage, uint64_t done, uint64_t total) = 0;
};

// Calls p->report() and throws Cancelled if it asks to stop. p may be null.
inline void report_progress(Progress* p, std::string_view stage, uint64_t done, uint64_t total) {
  if (p && !p->report(stage, done, total)) throw Cancelled();
}

}  // namespace chakra
