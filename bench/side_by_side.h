// chakra_bench --side-by-side: the reference Python tools (mlcommons/chakra 1.0.0, runnable from
// ../shared/reference/chakra/runnable) and our drop-ins for them, on the same inputs, on this
// machine, alternating.
#pragma once

#include <string>

namespace bench {

struct SideBySideOptions {
  std::string work;    // where inputs and outputs are written
  std::string chakra;  // our binary; the drop-ins are its symlinks beside it
  int copies = 16;     // copies of the ResNet traces in the large inputs
  int runs = 3;        // runs of each tool per row
};

// Prints a Markdown table, one row per tool and input: CPU time (user + system) min and median
// of each side, the median of the per-run ratios, peak RSS of each, and whether the outputs
// are byte-identical. The linker rows compare with the recorded reference figures and say so.
// Returns false when a run failed or an output we claim identical differs.
bool side_by_side(const SideBySideOptions& o);

}  // namespace bench
