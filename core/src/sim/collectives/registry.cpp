// The algorithm objects behind astra::Algorithm, from chakra/astra/collective_algorithms.def:
// each algorithm's file defines make_<Name>_algorithm(npus, dims).
#include "sim/collectives/collective.h"

namespace chakra::sim {

#define CHAKRA_COLLECTIVE_ALGORITHM(Name, spelling, flat, windowed) \
  std::unique_ptr<CollectiveAlgorithm> make_##Name##_algorithm(uint32_t npus, uint32_t dims);
#include "chakra/astra/collective_algorithms.def"
#undef CHAKRA_COLLECTIVE_ALGORITHM

std::unique_ptr<CollectiveAlgorithm> make_algorithm(Algorithm kind, uint32_t npus, uint32_t dims) {
  switch (kind) {
#define CHAKRA_COLLECTIVE_ALGORITHM(Name, spelling, flat, windowed) \
  case Algorithm::Name:                                             \
    return make_##Name##_algorithm(npus, dims);
#include "chakra/astra/collective_algorithms.def"
#undef CHAKRA_COLLECTIVE_ALGORITHM
  }
  throw Error("unknown collective algorithm " + std::to_string(int(kind)));
}

}  // namespace chakra::sim
