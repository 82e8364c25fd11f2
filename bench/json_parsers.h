// chakra_bench --side-by-side: our pull parser (chakra::JsonPull, the converter's and linker's
// reader) against simdjson, the well-kept library for the same job, on the same document.
#pragma once

#include <string>

namespace bench {

// Walks every value of the JSON file at `path` in memory with each parser, `runs` times, and
// prints the best time and MB/s of each. Without simdjson at build time it says so.
void compare_json_parsers(const std::string& path, int runs);

}  // namespace bench
