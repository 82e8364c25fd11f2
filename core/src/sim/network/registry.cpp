// The network backends by sim::Backend: the one place they are listed.
#include "sim/network/network.h"

namespace chakra::sim {

// Each defined in its backend's file.
std::unique_ptr<Network> make_congestion_unaware_network(EventQueue&, MessageSink&, const NetworkConfig&);
std::unique_ptr<Network> make_congestion_aware_network(EventQueue&, MessageSink&, const NetworkConfig&);

namespace {

struct BackendEntry {
  Backend backend;
  std::unique_ptr<Network> (*make)(EventQueue&, MessageSink&, const NetworkConfig&);
};
constexpr BackendEntry kBackends[] = {
    {Backend::CongestionUnaware, make_congestion_unaware_network},
    {Backend::CongestionAware, make_congestion_aware_network},
};
}  // namespace

std::unique_ptr<Network> make_network(Backend backend, EventQueue& queue, MessageSink& sink,
                                      const NetworkConfig& net) {
  for (const BackendEntry& b : kBackends)
    if (b.backend == backend) return b.make(queue, sink, net);
  throw Error("unknown network backend " + std::to_string(int(backend)));
}

}  // namespace chakra::sim
