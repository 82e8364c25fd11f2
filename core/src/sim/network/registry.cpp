// The network backends behind sim::Backend, from chakra/sim/network_backends.def: each
// backend's file defines make_<Name>_network().
#include "sim/network/network.h"

namespace chakra::sim {

#define CHAKRA_NETWORK_BACKEND(Name, spelling) \
  std::unique_ptr<Network> make_##Name##_network(EventQueue&, MessageSink&, const NetworkConfig&);
#include "chakra/sim/network_backends.def"
#undef CHAKRA_NETWORK_BACKEND

std::span<const BackendInfo> network_backends() {
  static constexpr BackendInfo kBackends[] = {
#define CHAKRA_NETWORK_BACKEND(Name, spelling) {Backend::Name, spelling},
#include "chakra/sim/network_backends.def"
#undef CHAKRA_NETWORK_BACKEND
  };
  return kBackends;
}

std::unique_ptr<Network> make_network(Backend backend, EventQueue& queue, MessageSink& sink, const NetworkConfig& net) {
  switch (backend) {
#define CHAKRA_NETWORK_BACKEND(Name, spelling) \
  case Backend::Name:                          \
    return make_##Name##_network(queue, sink, net);
#include "chakra/sim/network_backends.def"
#undef CHAKRA_NETWORK_BACKEND
  }
  throw Error("unknown network backend " + std::to_string(int(backend)));
}

}  // namespace chakra::sim
