// Linking and converting one PyTorch rank (its host ET with its Kineto trace, or either alone):
// the slow part of opening such files, which a page runs in a Web Worker so it keeps drawing.
// Both ends are one build of chakrakit; the byte forms are private to it and decoding checks
// every length against the bytes, so a damaged message is an error, never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/astra/config.h"

namespace chakra {

// What to convert: the files' bytes as given (gzip or not); either half may be empty.
struct RankConversion {
  uint32_t rank = 0;
  uint64_t generation = 0;  // which state of the rank's files this is (Workspace::take_conversions)
  std::string host, kineto;
  std::string host_name, kineto_name;
};

// What came of it.
struct ConvertedRank {
  uint32_t rank = 0;
  uint64_t generation = 0;
  std::string source;  // the file name(s)
  uint64_t bytes = 0;  // their size
  double convert_ms = 0;
  std::string et;                     // the rank's trace, encoded as a Chakra .et
  std::vector<std::string> notes;     // what linking/conversion did
  std::vector<std::string> warnings;  // what they left out or guessed
  astra::CommGroups groups;           // communicator groups the host ET names (the first of an id wins)
  std::string message;                // one line for a log
};

// Host ET + Kineto: linked with synchronisation dependencies and blocked time, then converted
// with the replay model (core/docs/pytorch-replay.md). Host ET alone: converted unlinked. Kineto
// alone: its measured activity (a timeline, no replay). Throws chakra::Error naming the files.
ConvertedRank convert_rank(const RankConversion& job);

std::string encode_conversion(const RankConversion& job);
RankConversion decode_conversion(std::string_view bytes);  // throws chakra::Error ("rank conversion: ...")
std::string encode_converted(const ConvertedRank& result);
ConvertedRank decode_converted(std::string_view bytes);  // throws chakra::Error ("converted rank: ...")

}  // namespace chakra
