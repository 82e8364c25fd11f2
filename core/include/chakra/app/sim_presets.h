// Named clusters to simulate on (assets/simulation/presets.json, compiled in): ASTRA-sim network
// and system settings with the source of each figure. The web app's Simulation view starts from
// these; any setting can then be edited.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/sim/simulate.h"

namespace chakra {

struct ClusterPreset {
  std::string name, title, source;
  astra::NetworkConfig network;
  astra::SystemConfig system;
};

// In file order; parsed once.
const std::vector<ClusterPreset>& cluster_presets();
// Throws chakra::Error listing the known names for an unknown one.
const ClusterPreset& cluster_preset(std::string_view name);

// `net` resized to `npus` NPUs: leading dimensions keep their sizes while they divide what is
// left, the last dimension takes the rest (a single dimension of `npus` when nothing fits).
// Throws chakra::Error for fewer than 2 NPUs (the analytical network needs 2 per dimension).
astra::NetworkConfig fit_network(const astra::NetworkConfig& net, uint64_t npus);

// Per-dimension algorithm lists made as long as the network has dimensions (the last entry is
// repeated, extra ones dropped), so a system config follows a network edit.
void fit_system(astra::SystemConfig& sys, size_t dims);

}  // namespace chakra
