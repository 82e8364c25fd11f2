// ASTRA-sim configs: the first byte picks network YAML, system JSON, comm-group JSON,
// remote-memory JSON or a --slowdown spec; the rest is the file. A config that parses must also
// write and read back.
#include "chakra/sim/simulate.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view body = fuzz_support::text(data + 1, size - 1);
  namespace sim = chakra::sim;
  fuzz_support::expect_clean([&] {
    switch (data[0] % 5) {
      case 0: {
        sim::NetworkConfig net = sim::parse_network(body, "fuzz.yml");
        sim::parse_network(sim::format_network(net), "fuzz.yml (written back)");
        break;
      }
      case 1: {
        sim::SystemConfig sys = sim::parse_system(body, "fuzz.json");
        sim::parse_system(sim::format_system(sys), "fuzz.json (written back)");
        break;
      }
      case 2: sim::parse_comm_groups(body, "fuzz_groups.json"); break;
      case 3: sim::parse_remote_memory(body, "fuzz_memory.json"); break;
      case 4: {
        const sim::Slowdowns s = sim::parse_slowdowns(body, "fuzz slowdowns");
        sim::parse_slowdowns(sim::format_slowdowns(s), "fuzz slowdowns (written back)");
        break;
      }
    }
  });
  return 0;
}
