// The simulator takes ASTRA-sim's configs (chakra/astra/config.h) and calls their types and
// readers by name, as ASTRA-sim's own code does. Private to core/src/sim.
#pragma once

#include "chakra/astra/config.h"

namespace chakra::sim {

using astra::Algorithm;
using astra::algorithm_name;
using astra::AlgorithmChoice;
using astra::AlgorithmInfo;
using astra::Collective;
using astra::collective_algorithms;
using astra::collective_name;
using astra::CollectiveOptimization;
using astra::CommGroups;
using astra::format_network;
using astra::format_system;
using astra::kCollectiveTypes;
using astra::load_comm_groups;
using astra::load_network;
using astra::load_remote_memory;
using astra::load_system;
using astra::MemoryType;
using astra::NetworkConfig;
using astra::parse_comm_groups;
using astra::parse_network;
using astra::parse_remote_memory;
using astra::parse_system;
using astra::RemoteMemoryConfig;
using astra::SchedulingPolicy;
using astra::SystemConfig;
using astra::topology_name;
using astra::TopologyKind;

}  // namespace chakra::sim
